//go:build tools

// Package tools records the etcd command scripts/build-tools.sh builds.
package tools

import _ "go.etcd.io/etcd/server/v3"
