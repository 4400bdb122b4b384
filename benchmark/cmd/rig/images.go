package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// findRoot walks up from the working directory to the repository root: the directory
// holding go.mod and the rig's benchmark/rig/docker-compose.yml.
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if fileExists(filepath.Join(d, "benchmark", "rig", "docker-compose.yml")) && fileExists(filepath.Join(d, "go.mod")) {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no benchmark/rig/docker-compose.yml with a go.mod in %s or above: run the rig from the Shoal repository", dir)
		}
	}
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// buildContext fills dir with what the Dockerfiles copy: the static binaries of shoal
// and the rig client, the Dockerfiles, and with withRedis the host's redis-server with
// its shared libraries under rootfs/.
func buildContext(ctx context.Context, root, dir string, withRedis bool) error {
	for bin, pkg := range map[string]string{"shoal": "./cmd/shoal", "rigclient": "./benchmark/cmd/rigclient"} {
		cmd := command(ctx, []string{"CGO_ENABLED=0", "GOOS=linux"}, "go", "build", "-trimpath", "-o", filepath.Join(dir, bin), pkg)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("building %s: %v\n%s", pkg, err, out)
		}
	}
	for _, f := range []string{"Dockerfile.shoal", "Dockerfile.redis", "Dockerfile.client"} {
		if err := copyFile(filepath.Join(root, "benchmark", "rig", f), filepath.Join(dir, f)); err != nil {
			return err
		}
	}
	if withRedis {
		return redisRootfs(ctx, filepath.Join(dir, "rootfs"))
	}
	return nil
}

// redisRootfs copies redis-server and every library ldd lists (the dynamic loader too)
// to the same paths under dst, which then runs in a FROM-scratch image.
func redisRootfs(ctx context.Context, dst string) error {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return fmt.Errorf("the redis-server run needs redis-server on this host (Debian: apt-get install redis-server): %w", err)
	}
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		return err
	}
	if err := copyFile(real, filepath.Join(dst, "usr/bin/redis-server")); err != nil {
		return err
	}
	out, err := run(ctx, nil, "ldd", real)
	if err != nil {
		return err
	}
	libs, err := lddPaths(out)
	if err != nil {
		return err
	}
	for _, lib := range libs {
		if err := copyFile(lib, filepath.Join(dst, lib)); err != nil {
			return err
		}
	}
	return nil
}

// lddPaths takes the absolute paths out of ldd's output: "libc.so.6 => /lib/.../libc.so.6
// (0x...)" and "/lib64/ld-linux-x86-64.so.2 (0x...)"; linux-vdso has no file.
func lddPaths(out string) ([]string, error) {
	var paths []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) >= 3 && f[1] == "=>" && strings.HasPrefix(f[2], "/"):
			paths = append(paths, f[2])
		case len(f) >= 1 && strings.HasPrefix(f[0], "/"):
			paths = append(paths, f[0])
		case len(f) >= 2 && f[1] == "=>" && (len(f) < 3 || f[2] == "not"):
			return nil, fmt.Errorf("ldd cannot find %s", f[0])
		}
	}
	if len(paths) == 0 {
		return nil, fmt.Errorf("ldd listed no libraries:\n%s", out)
	}
	return paths, nil
}

// copyFile copies src's content (following symlinks) to dst, creating its directory.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
