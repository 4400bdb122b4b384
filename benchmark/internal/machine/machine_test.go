package machine

import (
	"runtime"
	"strings"
	"testing"
)

func TestDescribeNamesCPUsAndGo(t *testing.T) {
	m := Describe()
	if m.CPUs != runtime.NumCPU() || m.GoVersion != runtime.Version() || m.Kernel == "" || m.Date == "" {
		t.Errorf("Describe() = %+v", m)
	}
	if s := m.String(); !strings.Contains(s, runtime.Version()) || !strings.Contains(s, m.Date) {
		t.Errorf("String() = %q, want the Go version and the date in it", s)
	}
}
