//go:build tools

// Package tools records the caddy command scripts/build-tools.sh builds.
package tools

import _ "github.com/caddyserver/caddy/v2/cmd/caddy"
