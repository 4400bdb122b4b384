package eventloop_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"math/big"
	"net"
	"time"

	"github.com/shoalkv/shoal/eventloop"
)

// upper answers every complete line with the line in upper case; a partial
// line is left unconsumed and comes back with the rest.
type upper struct{}

func (upper) OnTraffic(c *eventloop.Conn, in []byte) int {
	consumed := 0
	for {
		i := bytes.IndexByte(in[consumed:], '\n')
		if i < 0 {
			return consumed
		}
		out := c.OutputBuffer() // append replies in place: no copy
		out = append(out, bytes.ToUpper(in[consumed:consumed+i+1])...)
		c.SetOutputBuffer(out)
		consumed += i + 1
	}
}

func ExampleServer() {
	srv, err := eventloop.NewServer(upper{}, eventloop.Options{Addr: "127.0.0.1:0", Loops: 2})
	if err != nil {
		panic(err)
	}
	if err := srv.Start(); err != nil {
		panic(err)
	}
	c, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		panic(err)
	}
	fmt.Fprint(c, "hello\nwor")
	fmt.Fprint(c, "ld\n")
	r := bufio.NewReader(c)
	for i := 0; i < 2; i++ {
		line, _ := r.ReadString('\n')
		fmt.Print(line)
	}
	c.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	fmt.Println(srv.Shutdown(ctx))
	// Output:
	// HELLO
	// WORLD
	// <nil>
}

// later replies from another goroutine, as a handler does when the answer
// needs work it must not do on the loop.
type later struct{}

func (later) OnTraffic(c *eventloop.Conn, in []byte) int {
	req := string(in)
	go func() {
		time.Sleep(10 * time.Millisecond)
		c.AsyncWrite([]byte("done: " + req))
	}()
	return len(in)
}

func ExampleConn_AsyncWrite() {
	srv, _ := eventloop.NewServer(later{}, eventloop.Options{Addr: "127.0.0.1:0"})
	srv.Start()
	defer srv.Shutdown(context.Background())

	c, _ := net.Dial("tcp", srv.Addr().String())
	defer c.Close()
	fmt.Fprint(c, "job\n")
	line, _ := bufio.NewReader(c).ReadString('\n')
	fmt.Print(line)
	// Output: done: job
}

// shout is a second protocol: it answers every line with "!".
type shout struct{}

func (shout) OnTraffic(c *eventloop.Conn, in []byte) int {
	n := bytes.Count(in, []byte("\n"))
	for i := 0; i < n; i++ {
		c.WriteString("!\n")
	}
	return bytes.LastIndexByte(in, '\n') + 1
}

// One Server serves two addresses, each with its own Handler, on the same
// loops: Options.Addr with upper, and a Listener with shout.
func ExampleListener() {
	srv, err := eventloop.NewServer(upper{}, eventloop.Options{
		Addr:      "127.0.0.1:0",
		Listeners: []eventloop.Listener{{Addr: "127.0.0.1:0", Handler: shout{}}},
	})
	if err != nil {
		panic(err)
	}
	if err := srv.Start(); err != nil {
		panic(err)
	}
	defer srv.Shutdown(context.Background())
	for _, addr := range srv.Addrs() {
		c, err := net.Dial("tcp", addr.String())
		if err != nil {
			panic(err)
		}
		fmt.Fprint(c, "hi\n")
		line, _ := bufio.NewReader(c).ReadString('\n')
		fmt.Print(line)
		c.Close()
	}
	// Output:
	// HI
	// !
}

// ExampleOptions_tLS serves the same Handler over TLS: the loops run the
// records, and OnTraffic sees plaintext. (The certificate here is made on
// the spot; a server loads its own, with tls.LoadX509KeyPair.)
func ExampleOptions_tLS() {
	cert, pool := exampleCertificate()
	srv, err := eventloop.NewServer(upper{}, eventloop.Options{Addr: "127.0.0.1:0",
		TLSConfig: &tls.Config{Certificates: []tls.Certificate{cert}}})
	if err != nil {
		panic(err)
	}
	if err := srv.Start(); err != nil {
		panic(err)
	}
	defer srv.Shutdown(context.Background())

	c, err := tls.Dial("tcp", srv.Addr().String(), &tls.Config{RootCAs: pool, ServerName: "localhost"})
	if err != nil {
		panic(err)
	}
	defer c.Close()
	fmt.Fprint(c, "hello over tls\n")
	line, _ := bufio.NewReader(c).ReadString('\n')
	fmt.Print(line)
	// Output:
	// HELLO OVER TLS
}

// exampleCertificate makes a self-signed certificate for localhost and a
// pool that trusts it.
func exampleCertificate() (tls.Certificate, *x509.CertPool) {
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), DNSNames: []string{"localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, _ := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	leaf, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}, pool
}
