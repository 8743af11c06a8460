package dvppool

import (
	"bytes"

	"golang.org/x/crypto/ssh"

	"github.com/socialwebcomputer/doctor/checks/client/kube/keep"
	"github.com/socialwebcomputer/doctor/internal/source/sshkey"
)

// cloudUser is one entry of a #cloud-config users list, as far as the
// connector cares: its name and the keys cloud-init authorizes for it.
type cloudUser = keep.CloudUser

// cloudUsers reads the users of a #cloud-config document: what the cut
// keeps of a pool's userData (keep.CloudConfigUsers) is read the same way.
func cloudUsers(userData string) ([]cloudUser, error) { return keep.CloudUsers(userData) }

// authorizes says whether one of the authorized_keys lines is pub. Lines
// that do not parse as keys (a placeholder like <PUBLIC_KEY>) authorize
// nothing and are counted in bad.
func authorizes(lines []string, pub ssh.PublicKey) (ok bool, bad int) {
	want := pub.Marshal()
	for _, l := range lines {
		k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(l))
		if err != nil {
			bad++
			continue
		}
		if bytes.Equal(k.Marshal(), want) {
			return true, bad
		}
	}
	return false, bad
}

// publicHalf is the public key of a private key file, without its
// passphrase: an encrypted OpenSSH key carries its public key in the clear,
// which ssh.PassphraseMissingError hands back.
func publicHalf(pemBytes []byte) (ssh.PublicKey, error) {
	s, err := ssh.ParsePrivateKey(pemBytes)
	if err == nil {
		return s.PublicKey(), nil
	}
	if pm, ok := err.(*ssh.PassphraseMissingError); ok && pm.PublicKey != nil {
		return pm.PublicKey, nil
	}
	// A doctor bundle keeps an SSH key as its description, public half
	// included (sshkey.Description): analyze compares that.
	if k, derr := sshkey.Parse(pemBytes); derr == nil && k.Private && k.Authorized != "" {
		if pub, _, _, _, perr := ssh.ParseAuthorizedKey([]byte(k.Authorized)); perr == nil {
			return pub, nil
		}
	}
	return nil, err
}

// describeKey names a public key for evidence without printing it: its type
// and SHA256 fingerprint, as ssh-keygen -l shows it.
func describeKey(k ssh.PublicKey) string {
	return k.Type() + " " + ssh.FingerprintSHA256(k)
}
