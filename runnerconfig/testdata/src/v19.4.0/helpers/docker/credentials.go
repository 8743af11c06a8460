// Trimmed copy of gitlab-runner v19.4.0 (branch main at commit
// d79f3e7b89abceace75e2425bfe92b84ea059933, whose VERSION file says 19.4.0;
// the mirror has no v19.4 tag yet), made by internal/source/runnerversion/keygen:
// only the package clause, the imports and, byte for byte, the declarations
// the config.toml key walk reads. Copyright (c) 2015-2019 GitLab Inc., MIT
// License; the full text is in runnerconfig/testdata/src/LICENSE.

package docker

import (
	"os"
	"strconv"
)

type Credentials struct {
	Host      string `toml:"host,omitempty" json:"host" long:"host" env:"DOCKER_HOST" description:"Docker daemon address"`
	CertPath  string `toml:"tls_cert_path,omitempty" json:"tls_cert_path" long:"cert-path" env:"DOCKER_CERT_PATH" description:"Certificate path"`
	TLSVerify bool   `toml:"tls_verify,omitzero" json:"tls_verify" long:"tlsverify" env:"DOCKER_TLS_VERIFY" description:"Use TLS and verify the remote"`
}
