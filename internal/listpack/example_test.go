package listpack_test

import (
	"fmt"
	"strings"

	"github.com/shoalkv/shoal/internal/listpack"
)

// A listpack is built by appending entries after a header and finishing
// it; it is read forwards with Next and backwards with Prev once Validate
// has checked it.
func Example() {
	lp := listpack.AppendHeader(nil)
	for _, s := range []string{"name", "shoal", "port", "6379"} {
		lp = listpack.AppendString(lp, []byte(s))
	}
	lp = listpack.Finish(lp, 4)

	n, err := listpack.Validate(lp)
	fmt.Println(len(lp), "bytes,", n, "entries,", err)
	for p := listpack.First; p < len(lp)-1; {
		var e listpack.Entry
		e, p = listpack.Next(lp, p)
		fmt.Printf("%s integer=%v\n", e.AppendText(nil), e.IsInt)
	}
	var backwards []string
	for p := len(lp) - 1; p > listpack.First; {
		p = listpack.Prev(lp, p)
		e, _ := listpack.Next(lp, p)
		backwards = append(backwards, string(e.AppendText(nil)))
	}
	fmt.Println(strings.Join(backwards, " "))
	// Output:
	// 30 bytes, 4 entries, <nil>
	// name integer=false
	// shoal integer=false
	// port integer=false
	// 6379 integer=true
	// 6379 port shoal name
}
