package cli

import (
	"os"

	"github.com/spf13/pflag"
)

// Setting names, read by checks through Env.Setting. Every address doctor
// contacts is one of these or comes from the runner's own files, so tests
// point them at loopback.
const (
	SettingResolver      = "resolver"       // host:port; default: nameservers of /etc/resolv.conf under --root
	SettingPublicDNS     = "public-dns"     // host:port of a public resolver, to compare a Funnel name's answers
	SettingNodeDNS       = "dns-server"     // host:port of node-local DNS
	SettingRepositoryURL = "repository-url" // CI_REPOSITORY_URL, when known
	SettingProbeImage    = "probe-image"    // image of the --deep probe pod
)

// Production defaults. None of them is contacted by a test.
const (
	DefaultPublicDNS  = "1.1.1.1:53"
	DefaultNodeDNS    = "169.254.20.10:53"
	DefaultProbeImage = "busybox:1.36"
)

// registerSettings adds the flags behind the settings; the returned func
// reads them after parsing. Only flags given (or a known environment) are
// set, so a check can tell "given" from "default".
func registerSettings(fs *pflag.FlagSet) func() map[string]string {
	resolver := fs.String(SettingResolver, "", "ask the DNS server at `HOST:PORT` for the system resolver (default: the nameservers of /etc/resolv.conf under --root)")
	public := fs.String(SettingPublicDNS, "", "ask the public resolver at `HOST:PORT` whether a Funnel name resolves publicly (default "+DefaultPublicDNS+")")
	node := fs.String(SettingNodeDNS, "", "probe the node-local DNS at `HOST:PORT` directly (default "+DefaultNodeDNS+", and only when doctor runs on a node or in a job pod)")
	repo := fs.String(SettingRepositoryURL, "", "the CI_REPOSITORY_URL of a failing job, a `URL` whose host gitlab-reachability and node-local-dns also try; its credentials are never printed (default: $CI_REPOSITORY_URL)")
	image := fs.String(SettingProbeImage, "", "run the --deep probe pod from `IMAGE` (default "+DefaultProbeImage+")")
	return func() map[string]string {
		m := map[string]string{}
		set := func(k, v string) {
			if v != "" {
				m[k] = v
			}
		}
		set(SettingResolver, *resolver)
		set(SettingPublicDNS, *public)
		set(SettingNodeDNS, *node)
		set(SettingRepositoryURL, *repo)
		if *repo == "" {
			set(SettingRepositoryURL, os.Getenv("CI_REPOSITORY_URL"))
		}
		set(SettingProbeImage, *image)
		return m
	}
}
