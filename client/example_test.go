package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/shoalkv/shoal/client"
)

// A client is shared by every goroutine of a program; calls made at the
// same time go out together.
func Example() {
	c, err := client.New(client.Options{Addr: "127.0.0.1:6379"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := c.Set(ctx, "greeting", []byte("hello")); err != nil {
		log.Fatal(err)
	}
	v, err := c.Get(ctx, "greeting")
	switch {
	case errors.Is(err, client.ErrNil):
		fmt.Println("no greeting")
	case err != nil:
		log.Fatal(err)
	default:
		fmt.Printf("%s\n", v)
	}
	n, err := c.Incr(ctx, "visits")
	if err != nil {
		log.Fatal(err)
	}
	ttl, err := c.Do(ctx, "EXPIRE", "visits", 60)
	fmt.Println(n, ttl, err)
}

// GetInto reuses one buffer across calls: no allocation at all.
func ExampleClient_GetInto() {
	c, err := client.New(client.Options{Addr: "127.0.0.1:6379"})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	var buf []byte
	for _, k := range []string{"a", "b", "c"} {
		buf, err = c.GetInto(context.Background(), buf[:0], k)
		if err != nil && !errors.Is(err, client.ErrNil) {
			log.Fatal(err)
		}
		fmt.Printf("%s=%q\n", k, buf)
	}
}
