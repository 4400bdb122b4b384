package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// docker runs the docker and compose commands of one rig, all under one compose project
// name, so that everything the rig creates can be found and removed by that name.
type docker struct {
	project     string
	composeFile string
	compose     []string // "docker-compose" or "docker compose"
	env         []string // RIG_* variables for docker-compose.yml
}

// findCompose returns the compose command that works here: docker-compose v1 or the
// docker compose v2 plugin.
func findCompose() ([]string, error) {
	for _, c := range [][]string{{"docker-compose"}, {"docker", "compose"}} {
		if err := exec.Command(c[0], append(c[1:], "version")...).Run(); err == nil {
			return c, nil
		}
	}
	return nil, errors.New("neither docker-compose nor docker compose works")
}

// dockerUsable says why docker cannot run the rig, or nil.
func dockerUsable() error {
	out, err := exec.Command("docker", "info", "--format", "{{.ServerVersion}}").CombinedOutput()
	if err != nil {
		return fmt.Errorf("docker info: %v: %s", err, bytes.TrimSpace(out))
	}
	return nil
}

// command builds a child process in its own process group, so a Ctrl-C at the terminal
// reaches only the driver, which then tears down in order.
func command(ctx context.Context, env []string, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = append(os.Environ(), env...)
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// run runs a command and returns its stdout; the error carries its output.
func run(ctx context.Context, env []string, name string, args ...string) (string, error) {
	cmd := command(ctx, env, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.String(), fmt.Errorf("%s %s: %v\n%s%s", name, strings.Join(args, " "), err,
			tail(stdout.String(), 2000), tail(stderr.String(), 2000))
	}
	return stdout.String(), nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func (d *docker) composeRun(ctx context.Context, args ...string) (string, error) {
	full := append(append(append([]string{}, d.compose[1:]...), "-p", d.project, "-f", d.composeFile), args...)
	return run(ctx, d.env, d.compose[0], full...)
}

// containers lists the IDs of a service's containers, running or not.
func (d *docker) containers(ctx context.Context, service string) ([]string, error) {
	out, err := run(ctx, nil, "docker", "ps", "-aq", "--no-trunc",
		"--filter", "label=com.docker.compose.project="+d.project,
		"--filter", "label=com.docker.compose.service="+service)
	return strings.Fields(out), err
}

// inspect returns one field of a container (a Go template).
func inspect(ctx context.Context, id, format string) (string, error) {
	out, err := run(ctx, nil, "docker", "inspect", "-f", format, id)
	return strings.TrimSpace(out), err
}

// containerPID returns the host PID of a container's main process: the container's
// process is an ordinary process of this kernel, so /proc/PID tells its RSS and whether it
// still runs without asking docker every second (a docker call costs the 2-core machine
// more than the rig can spare at 100k connections).
func containerPID(ctx context.Context, id string) (int, error) {
	text, err := inspect(ctx, id, "{{.State.Pid}}")
	if err != nil {
		return 0, err
	}
	pid, err := strconv.Atoi(text)
	if err != nil || pid <= 0 {
		return 0, fmt.Errorf("container %.12s has no running process (pid %q)", id, text)
	}
	return pid, nil
}

// teardown removes everything of the project: containers, network, volumes and the
// images it built, then sweeps by label whatever compose left (an interrupted build or
// up, a probe container). It uses its own context: it must run after a Ctrl-C too.
func (d *docker) teardown() error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var errs []error
	if _, err := d.composeRun(ctx, "down", "-v", "--rmi", "all", "--remove-orphans", "-t", "5"); err != nil {
		errs = append(errs, err)
	}
	if err := sweep(ctx, d.project); err != nil {
		errs = append(errs, err)
	}
	left, err := leftovers(ctx, d.project)
	if err != nil {
		errs = append(errs, err)
	} else if len(left) > 0 {
		errs = append(errs, fmt.Errorf("left after teardown: %s", strings.Join(left, ", ")))
	}
	if len(left) == 0 && err == nil {
		return nil // compose's own complaints do not matter once nothing is left
	}
	return errors.Join(errs...)
}

// filters select what belongs to project: compose's project label, and the shoal.rig
// label that docker-compose.yml and the probe put on containers, networks and images.
func filters(project string) [][]string {
	return [][]string{
		{"--filter", "label=com.docker.compose.project=" + project},
		{"--filter", "label=shoal.rig=" + project},
	}
}

// sweep force-removes the project's containers, networks and images.
func sweep(ctx context.Context, project string) error {
	var errs []error
	for _, kind := range []struct{ list, remove []string }{
		{[]string{"ps", "-aq"}, []string{"rm", "-f", "-v"}},
		{[]string{"network", "ls", "-q"}, []string{"network", "rm"}},
		{[]string{"images", "-q"}, []string{"rmi", "-f"}},
	} {
		for _, f := range filters(project) {
			out, err := run(ctx, nil, "docker", append(kind.list, f...)...)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if ids := uniq(strings.Fields(out)); len(ids) > 0 {
				if _, err := run(ctx, nil, "docker", append(kind.remove, ids...)...); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	return errors.Join(errs...)
}

// leftovers names every container, network and image of project that still exists.
func leftovers(ctx context.Context, project string) ([]string, error) {
	var left []string
	for _, kind := range []struct {
		what string
		list []string
	}{
		{"container", []string{"ps", "-a", "--format", "{{.Names}}"}},
		{"network", []string{"network", "ls", "--format", "{{.Name}}"}},
		{"image", []string{"images", "--format", "{{.Repository}}:{{.Tag}}"}},
	} {
		for _, f := range filters(project) {
			out, err := run(ctx, nil, "docker", append(kind.list, f...)...)
			if err != nil {
				return nil, err
			}
			for _, name := range strings.Fields(out) {
				left = append(left, kind.what+" "+name)
			}
		}
		// Images tagged with the project's name but unlabelled (a build cut short).
		if kind.what == "image" {
			out, err := run(ctx, nil, "docker", "images", "--format", "{{.Repository}}:{{.Tag}}", "--filter", "reference="+project+"-*")
			if err != nil {
				return nil, err
			}
			for _, name := range strings.Fields(out) {
				left = append(left, "image "+name)
			}
		}
	}
	return uniq(left), nil
}

func uniq(s []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range s {
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}
