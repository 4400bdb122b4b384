package slowconsumer_test

import (
	"context"
	"fmt"
	"time"

	"github.com/shoalkv/shoal/internal/slowconsumer"
)

// Four subscribers that never read, against a server already running on
// port 6379 as process 12345. Without an Output comment the example is
// compiled, not run: it needs that server.
func ExampleRun() {
	res, err := slowconsumer.Run(context.Background(), slowconsumer.Options{
		Addr: "127.0.0.1:6379", PID: 12345, Subscribers: 4, Settle: 2 * time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("closed %d/4 after %d bytes each on average; %d bytes of RSS per subscriber at the peak; longest PUBLISH %v\n",
		res.Closed, res.MeanClosedAtBytes(), res.GrowthPerSubscriber(), res.PublishMaxLatency)
}
