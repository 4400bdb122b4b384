// Package rig is what the stress rig's driver (benchmark/cmd/rig) and its in-container
// clients (benchmark/cmd/rigclient) exchange through the directory they share (the
// client containers mount it at /out), and the Dockerfiles of the rig's images.
//
// Each client claims a slot (the file slot-<k>, created exclusively), writes its Status to <id>.status every second and its Result to
// <id>.result when its load is over; the driver writes the file "go" once every client
// is connected and checked, and the clients start their load together on it.
package rig

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/shoalkv/shoal/internal/loadgen"
)

// Phases of a client, in order.
const (
	PhaseResolve = "resolve" // waiting for the server service's addresses
	PhaseDial    = "dial"    // opening connections at the ramp rate
	PhaseCheck   = "check"   // checking each connection on its own key
	PhaseReady   = "ready"   // connected and checked, waiting for GoFile
	PhaseLoad    = "load"    // open-loop load
	PhaseDone    = "done"    // Result written
)

// GoFile is the name of the file whose appearance starts the clients' load.
const GoFile = "go"

// Status is a client's live state.
type Status struct {
	ID        string    `json:"id"`
	Slot      int       `json:"slot"` // 0..clients-1, which share of the load it runs
	Phase     string    `json:"phase"`
	Time      time.Time `json:"time"`
	Target    int       `json:"target"`    // connections this client opens
	Connected int64     `json:"connected"` // open and (after the check) answering correctly
	Failed    int64     `json:"failed"`    // dials and checks that failed
	Completed int64     `json:"completed"` // measured replies so far
	// Histogram is the cumulative latency histogram of the load so far (loadgen's
	// encoding), so the driver can merge all clients' and difference two ticks exactly.
	Histogram string `json:"histogram,omitempty"`
	Error     string `json:"error,omitempty"` // why the client gave up
}

// Result is a client's final report.
type Result struct {
	ID             string          `json:"id"`
	Slot           int             `json:"slot"`
	Servers        []string        `json:"servers"` // the addresses it spread over
	Target         int             `json:"target"`
	Connected      int64           `json:"connected"` // open and checked when the load began
	ConnectSeconds float64         `json:"connect_seconds"`
	Report         *loadgen.Report `json:"report"`
}

// WriteJSON writes v to dir/name atomically (a temporary file renamed over it), so a
// reader never sees half a file.
func WriteJSON(dir, name string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, name))
}

// ReadJSON reads dir/name into v.
func ReadJSON(dir, name string, v any) error {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}
