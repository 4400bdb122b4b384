package frame_test

import (
	"fmt"

	"github.com/shoalkv/shoal/proto/frame"
)

func Example() {
	wire, _ := frame.AppendSet(nil, []byte("greeting"), []byte("hello"))
	wire, _ = frame.AppendGet(wire, []byte("greeting"))

	var d frame.Decoder
	var req frame.Request
	for len(wire) > 0 {
		n, err := d.DecodeRequest(wire, &req)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%v %q %q\n", req.Op, req.Key, req.Value)
		wire = wire[n:]
	}
	_, err := frame.AppendGet(nil, make([]byte, 70000))
	fmt.Println(err)
	// Output:
	// SET "greeting" "hello"
	// GET "greeting" ""
	// frame: key length 70000 exceeds limit 65535
}
