//go:build integration

package testenv

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// ownsListener reports whether process pid holds the socket listening on
// 127.0.0.1:port (or the wildcard address). A port FreePort gave out can be
// taken by another test before the process binds it; then a connect
// succeeds, but to the wrong server, and the process itself exits with
// "address already in use". Checking the owner keeps waitListening from
// taking the stranger for the process.
func ownsListener(pid, port int) (bool, error) {
	inodes, err := listeningInodes(port)
	if err != nil || len(inodes) == 0 {
		return false, err
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return false, nil // the process has exited: it owns nothing
	}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(fmt.Sprintf("/proc/%d/fd", pid), fd.Name()))
		if err != nil {
			continue // closed since the listing
		}
		if inode, ok := strings.CutPrefix(link, "socket:["); ok && inodes[strings.TrimSuffix(inode, "]")] {
			return true, nil
		}
	}
	return false, nil
}

// listeningInodes returns the inodes of the IPv4 TCP sockets in LISTEN on
// port at 127.0.0.1 or 0.0.0.0, from /proc/net/tcp.
func listeningInodes(port int) (map[string]bool, error) {
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		return nil, err
	}
	want := fmt.Sprintf(":%04X", port)
	found := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Scan() // the header
	for sc.Scan() {
		// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[3] != "0A" || !strings.HasSuffix(f[1], want) {
			continue
		}
		if ip := strings.TrimSuffix(f[1], want); ip != "0100007F" && ip != "00000000" {
			continue
		}
		if _, err := strconv.ParseUint(f[9], 10, 64); err == nil {
			found[f[9]] = true
		}
	}
	return found, sc.Err()
}
