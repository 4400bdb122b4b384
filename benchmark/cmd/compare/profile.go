package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/shoalkv/shoal/benchmark/internal/proc"
)

// profileShoal runs GET c=50 P=16 once more on a fresh shoal and profiles the server over
// the measured interval. If the binary has a --cpuprofile flag it writes a pprof profile;
// otherwise perf record samples it (-e cpu-clock works in containers without hardware
// counters). It returns a sentence for the report naming the files.
func profileShoal(ctx context.Context, o *options, bins *binaries, spec proc.Spec, out string, tck int64) (string, error) {
	help, _ := exec.Command(bins.shoal, "-h").CombinedOutput()
	pprofFile := filepath.Join(out, spec.Name+".cpu.pprof")
	usePprof := strings.Contains(string(help), "cpuprofile")
	if usePprof {
		base := spec.Argv
		spec.Argv = func(p int) []string { return append(base(p), "--cpuprofile", pprofFile) }
	}
	srv, err := proc.Start(spec)
	if err != nil {
		return "", err
	}
	defer srv.Stop()
	if err := preload(ctx, o, bins, srv, tck); err != nil {
		return "", err
	}
	args := append(commonArgs(o, "get"), "-c", "50", "-P", "16")
	if usePprof {
		if _, err := runLoad(ctx, bins.load, srv, args, tck, hooks{}); err != nil {
			return "", err
		}
		srv.Stop() // shoal writes the profile on exit
		top, _ := exec.Command("go", "tool", "pprof", "-top", "-nodecount=40", bins.shoal, pprofFile).Output()
		os.WriteFile(filepath.Join(out, spec.Name+".cpu.top.txt"), top, 0o644)
		return spec.Name + ".cpu.pprof (go tool pprof) and " + spec.Name + ".cpu.top.txt, GET c=50 P=16, whole server lifetime", nil
	}
	if _, err := exec.LookPath("perf"); err != nil {
		return "not profiled: shoal has no --cpuprofile and perf is not installed", nil
	}
	data := filepath.Join(os.TempDir(), spec.Name+"-compare-perf.data")
	defer os.Remove(data)
	var perf *exec.Cmd
	var perfErr error
	h := hooks{
		measuring: func() {
			perf = exec.Command("perf", "record", "-e", "cpu-clock", "-F", "999", "-g", "-p", strconv.Itoa(srv.PID()), "-o", data)
			perf.Stdout, perf.Stderr = nil, nil
			perfErr = perf.Start()
		},
		done: func() {
			if perf != nil && perfErr == nil {
				perf.Process.Signal(syscall.SIGINT)
				perfErr = perf.Wait()
				// perf writes its data on SIGINT, then re-raises the signal to exit by it.
				var exit *exec.ExitError
				if errors.As(perfErr, &exit) {
					if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGINT {
						perfErr = nil
					}
				}
			}
		},
	}
	if _, err := runLoad(ctx, bins.load, srv, args, tck, h); err != nil {
		return "", err
	}
	if perfErr != nil {
		return fmt.Sprintf("not profiled: perf record failed: %v", perfErr), nil
	}
	report, err := exec.Command("perf", "report", "-i", data, "--stdio", "--no-children", "--percent-limit", "0.5", "-g", "none").Output()
	if err != nil {
		return fmt.Sprintf("not profiled: perf report failed: %v", err), nil
	}
	if err := os.WriteFile(filepath.Join(out, spec.Name+".perf.txt"), report, 0o644); err != nil {
		return "", err
	}
	return spec.Name + ".perf.txt (perf record -e cpu-clock -g over the measured interval of GET c=50 P=16; shoal has no --cpuprofile)", nil
}
