package main

import (
	"errors"
	"log/slog"
	"net"
	"strconv"

	"github.com/shoalkv/shoal/cluster"
	"github.com/shoalkv/shoal/config"
	"github.com/shoalkv/shoal/eventloop"
	"github.com/shoalkv/shoal/kv"
)

// startCluster makes this server a Redis Cluster node when
// cluster-enabled is yes: the node's state (nodes.conf in --dir, read or
// created), attached to h, and the bus's listener on bind:cluster-port,
// served on the event loops. It returns nil without cluster-enabled.
func startCluster(params *config.Table, h *kv.Handler, bind, engine string, logger *slog.Logger) (*cluster.State, eventloop.Listener, error) {
	if !params.Bool("cluster-enabled") {
		return nil, eventloop.Listener{}, nil
	}
	if engine == "gnet" {
		return nil, eventloop.Listener{}, errors.New("cluster-enabled needs the native engine: the bus is a second listener, which the gnet engine cannot serve")
	}
	port := int(params.Int("port"))
	if port == 0 {
		return nil, eventloop.Listener{}, errors.New("cluster-enabled needs a TCP port: other nodes and clients reach this node by it")
	}
	busPort := int(params.Int("cluster-port"))
	if busPort == 0 {
		busPort = port + 10000
	}
	if busPort > 65535 {
		return nil, eventloop.Listener{}, errors.New("cluster bus port " + strconv.Itoa(busPort) + " (port + 10000) is above 65535: set cluster-port")
	}
	nodes, err := cluster.New(cluster.Options{
		Port: port, BusPort: busPort, ConfigFile: params.Get("cluster-config-file"), Logger: logger,
	})
	if err != nil {
		return nil, eventloop.Listener{}, err
	}
	nodes.OwnParams(params)
	h.AttachCluster(nodes)
	logger.Info("cluster bus", "addr", net.JoinHostPort(bind, strconv.Itoa(busPort)), "myid", nodes.MyID())
	return nodes, eventloop.Listener{Addr: net.JoinHostPort(bind, strconv.Itoa(busPort)), Handler: nodes.BusHandler()}, nil
}
