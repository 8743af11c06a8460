package kubefacts

import (
	"fmt"
	"strings"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
)

// InlineKubeconfigFiles returns a copy of kc whose context names no file:
// the certificate-authority, client-certificate, client-key and tokenFile
// of its cluster and user are read through the Env (under --root,
// size-bounded, regular files only, a FIFO never opened blocking) and
// carried as data. It runs before client-go's ClientConfig, which would
// otherwise open each by its host path itself (clientcmd/validation.go
// opens them without O_NONBLOCK: a FIFO blocks until the deadline) and read
// tokenFile whole (client_config.go: os.ReadFile, so /dev/zero is
// unbounded memory). inlineFiles after ClientConfig then finds nothing left
// to read.
func InlineKubeconfigFiles(r hostfacts.RunnerReader, kc *clientcmdapi.Config, context string) (*clientcmdapi.Config, error) {
	env := r.Env
	kc = kc.DeepCopy()
	ctx := kc.Contexts[context]
	if ctx == nil {
		return kc, nil // ClientConfig says the context is missing
	}
	// key is the kubeconfig's name of the path; key+"-data" of the bytes.
	read := func(key string, p *string, data *[]byte) error {
		switch {
		case *p == "":
			return nil
		case len(*data) > 0:
			// client-go refuses both, and its validation would open the file.
			return fmt.Errorf("the kubeconfig's context %q names both %s and %s-data (%s-data would override)", context, key, key, key)
		}
		b, err := r.Read(hostPath(env, *p), hostio.KindPEM)
		if err != nil {
			// Not "key: path": a redactor takes what follows a key name
			// ending in -key for a secret.
			return fmt.Errorf("the kubeconfig's %s (%w)", key, err)
		}
		*data, *p = b, ""
		return nil
	}
	if c := kc.Clusters[ctx.Cluster]; c != nil {
		if err := read("certificate-authority", &c.CertificateAuthority, &c.CertificateAuthorityData); err != nil {
			return nil, err
		}
	}
	u := kc.AuthInfos[ctx.AuthInfo]
	if u == nil {
		return kc, nil
	}
	if err := read("client-certificate", &u.ClientCertificate, &u.ClientCertificateData); err != nil {
		return nil, err
	}
	if err := read("client-key", &u.ClientKey, &u.ClientKeyData); err != nil {
		return nil, err
	}
	if u.TokenFile != "" {
		// client-go reads tokenFile only when token is empty, and keeps it
		// beside the token otherwise; either way doctor reads it here.
		if u.Token == "" {
			b, err := r.Read(hostPath(env, u.TokenFile), hostio.KindToken)
			if err != nil {
				return nil, fmt.Errorf("the kubeconfig's tokenFile (%w)", err)
			}
			u.Token = strings.TrimSpace(string(b))
		}
		u.TokenFile = ""
	}
	return kc, nil
}
