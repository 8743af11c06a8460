//go:build integration

package e2e

import (
	"time"

	"github.com/socialwebcomputer/doctor/testkit/testenv"
	"github.com/socialwebcomputer/doctor/testkit/testpki"
)

const ownerDID = "did:plc:ewvi7nxzyoun6zhxrhs64oiz"

// ownerKubeconfig is what getKubeconfig hands the user: the owner's
// certificate (CN=<did>, O=socialweb.computer:cluster-owners) until notAfter,
// for server (the apiserver, or a Caddy front in front of it).
func ownerKubeconfig(env *testenv.Env, server string, notAfter time.Time) []byte {
	cert, key := env.OwnerCert(ownerDID, notAfter)
	return testpki.Kubeconfig("tenant-ci", server, env.CAPEM, cert, key)
}
