package kv

import (
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// errorStats counts error replies by their first word, for INFO's
// total_error_replies and Errorstats section. Errors are off the hot path,
// so a mutex is fine.
type errorStats struct {
	total  atomic.Int64
	mu     sync.Mutex
	byCode map[string]int64
}

// maxErrorCodes bounds the table as Redis does (it stops tracking new codes
// past 128) so odd error words cannot grow it without limit.
const maxErrorCodes = 128

func (e *errorStats) count(reply string) {
	e.total.Add(1)
	code, _, _ := strings.Cut(reply, " ")
	e.mu.Lock()
	if e.byCode == nil {
		e.byCode = make(map[string]int64)
	}
	if _, ok := e.byCode[code]; ok || len(e.byCode) < maxErrorCodes {
		e.byCode[code]++
	}
	e.mu.Unlock()
}

func (e *errorStats) reset() {
	e.total.Store(0)
	e.mu.Lock()
	e.byCode = nil
	e.mu.Unlock()
}

// appendStats appends "errorstat_ERR:count=N" lines in Redis's (sorted) order.
func (e *errorStats) appendStats(b []byte) []byte {
	e.mu.Lock()
	defer e.mu.Unlock()
	codes := make([]string, 0, len(e.byCode))
	for c := range e.byCode {
		codes = append(codes, c)
	}
	sort.Strings(codes)
	for _, c := range codes {
		b = append(b, "errorstat_"...)
		b = append(b, c...)
		b = append(b, ":count="...)
		b = strconv.AppendInt(b, e.byCode[c], 10)
		b = append(b, "\r\n"...)
	}
	return b
}
