package main

import (
	"fmt"
	"log/slog"

	"github.com/shoalkv/shoal/config"
)

// capMaxClients lowers maxclients to what the process's descriptor limit can hold, as
// Redis does, and logs when it had to: a server that accepts clients it has no descriptor
// for fails them with EMFILE at accept instead of refusing them with Redis's error.
func capMaxClients(maxClients int, logger *slog.Logger) int {
	room, err := config.MaxClientsRoom()
	if err != nil {
		logger.Warn("cannot read the descriptor limit; maxclients left as given", "err", err)
		return maxClients
	}
	if maxClients <= room {
		return maxClients
	}
	logger.Warn(fmt.Sprintf("maxclients %d needs %d descriptors but the limit is %d: maxclients reduced to %d",
		maxClients, maxClients+config.ReservedFDs, room+config.ReservedFDs, room),
		"requested", maxClients, "nofile", room+config.ReservedFDs, "maxclients", room)
	return room
}
