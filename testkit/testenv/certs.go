//go:build integration

package testenv

import (
	"net"
	"time"

	"github.com/socialwebcomputer/doctor/testkit/testpki"
)

// CA is a certificate authority minted in Go for one test environment. The
// apiserver trusts Env's CA for client certificates (--client-ca-file), as
// the kcp front trusts the gateway's CA; a second CA models a revoked or
// foreign issuer. It is testpki's CA with the two mints testenv uses.
type CA struct{ *testpki.CA }

// NewCA mints a self-signed ECDSA P-256 CA valid for a day.
func NewCA(cn string) (*CA, error) {
	now := time.Now()
	ca, err := testpki.NewCA(cn, now.Add(-time.Hour), now.Add(24*time.Hour))
	if err != nil {
		return nil, err
	}
	return &CA{ca}, nil
}

// MintClient mints a client certificate. Kubernetes reads the user name from
// CN and the groups from O, so groups map to Subject.Organization.
func (ca *CA) MintClient(cn string, groups []string, notBefore, notAfter time.Time) (certPEM, keyPEM []byte, err error) {
	return ca.Client(cn, groups, notBefore, notAfter)
}

// MintServing mints a serving certificate valid for a day; each host is put
// in the IP SANs if it parses as an IP, else in the DNS SANs.
func (ca *CA) MintServing(hosts ...string) (certPEM, keyPEM []byte, err error) {
	var names []string
	var ips []net.IP
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			ips = append(ips, ip)
		} else {
			names = append(names, h)
		}
	}
	return ca.Server(names, ips, time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour))
}
