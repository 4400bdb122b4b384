package slowconsumer

import (
	"fmt"
	"time"

	"github.com/shoalkv/shoal/proto/resp"
)

// publishStats is what the publisher saw.
type publishStats struct {
	acked       int64           // payload bytes of the PUBLISHes answered
	maxLatency  time.Duration   // longest write-to-reply time of one PUBLISH
	elapsed     time.Duration   // first write to last reply
	closedAt    []int64         // acked bytes when each subscriber stopped being counted
	closedAfter []time.Duration // and when, from the first write
	receivers   int             // the receiver count of the last reply
}

// publish sends size-byte messages to channel, keeping PublishInFlight of them
// unanswered, until total payload bytes are sent or no subscriber receives
// them any more. Each PUBLISH reply counts the receivers; a drop in the count
// is a subscriber the server closed, recorded at the bytes acknowledged
// before that reply: what had been published to it.
func publish(c *respConn, channel string, size int, total int64, subscribers int) (publishStats, error) {
	payload := make([]byte, size)
	for i := range payload {
		payload[i] = 'a' + byte(i%26)
	}
	cmd := resp.AppendCommandBytes(nil, []byte("PUBLISH"), []byte(channel), payload)

	st := publishStats{receivers: subscribers}
	var sentAt [PublishInFlight]time.Time // a ring: the oldest unanswered write is at head
	var head, pending int
	var sent int64
	start := time.Now()
	for {
		for pending < PublishInFlight && sent < total && st.receivers > 0 {
			sentAt[(head+pending)%PublishInFlight] = time.Now()
			if _, err := c.conn.Write(cmd); err != nil {
				return st, fmt.Errorf("PUBLISH after %d bytes: %w", st.acked, err)
			}
			pending++
			sent += int64(size)
		}
		if pending == 0 {
			break
		}
		v, err := c.read()
		if err != nil {
			return st, fmt.Errorf("PUBLISH after %d bytes: reading the reply: %w", st.acked, err)
		}
		now := time.Now()
		st.maxLatency = max(st.maxLatency, now.Sub(sentAt[head]))
		head, pending = (head+1)%PublishInFlight, pending-1
		n, err := v.integer("PUBLISH")
		if err != nil {
			return st, err
		}
		if n > int64(st.receivers) {
			return st, fmt.Errorf("PUBLISH to %s reached %d receivers, more than the %d subscribed", channel, n, st.receivers)
		}
		for range int64(st.receivers) - n {
			st.closedAt = append(st.closedAt, st.acked)
			st.closedAfter = append(st.closedAfter, now.Sub(start))
		}
		st.receivers = int(n)
		st.acked += int64(size)
		st.elapsed = now.Sub(start)
	}
	return st, nil
}

// subscribe sends SUBSCRIBE channel on c and checks the confirmation.
func subscribe(c *respConn, channel string) error {
	v, err := c.do("SUBSCRIBE", channel)
	if err != nil {
		return err
	}
	if len(v.elems) != 3 || v.elems[0].text != "subscribe" || v.elems[1].text != channel {
		return fmt.Errorf("SUBSCRIBE %s: unexpected confirmation %+v", channel, v)
	}
	return nil
}
