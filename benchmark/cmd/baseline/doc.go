// Command baseline serves the baseline RESP servers of package baseline for
// benchmark/cmd/compare.
//
//	baseline -engine net  -addr 127.0.0.1:7001
//	baseline -engine gnet -addr 127.0.0.1:7002
//
// It stops on SIGINT or SIGTERM.
package main
