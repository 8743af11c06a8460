package testpki

import (
	"encoding/base64"
	"fmt"
	"strings"
	"time"
)

// ShapedUsers are the users of ShapedKubeconfig, each named after the YAML
// shape its client key is written in.
var ShapedUsers = []string{"comment", "flow", "literal", "folded", "single", "double", "anchor"}

// ShapedSecrets are the secrets ShapedKubeconfig writes besides the keys,
// each in a shape of its own; an empty one is left out.
type ShapedSecrets struct {
	Token      string // the comment user's, with a comment after it
	Password   string // the flow user's, single-quoted in the flow mapping
	Username   string // the flow user's
	AliasToken string // beside a merge key of the anchor user's entry
	ExecArg    string // an exec plugin's argument, in a flow sequence
	ExecEnv    string // an exec plugin's variable's value, in a flow mapping
}

// ShapedKubeconfig is a kubeconfig client-go loads whose users carry their
// client keys (certificates issued by ca for cn and groups) in every shape
// YAML allows: behind a trailing comment that quotes another key, in a
// flow mapping, a literal block over lines, a folded block, single and
// double quotes, behind an anchor an alias user merges (<<). Its context
// tenant-ci uses server and the comment user. It returns the document and
// each shaped user's certificate and key PEM.
func ShapedKubeconfig(ca *CA, server string, s ShapedSecrets, cn string, groups []string, notBefore, notAfter time.Time) (string, map[string][2][]byte, error) {
	keys := map[string][2][]byte{}
	d := map[string]string{}
	for _, u := range ShapedUsers {
		cert, key, err := ca.Client(cn, groups, notBefore, notAfter)
		if err != nil {
			return "", nil, err
		}
		keys[u] = [2][]byte{cert, key}
		d[u+".cert"], d[u+".key"] = base64.StdEncoding.EncodeToString(cert), base64.StdEncoding.EncodeToString(key)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `apiVersion: v1
kind: Config
current-context: tenant-ci
clusters:
- name: tenant-ci
  cluster: {server: %q, certificate-authority-data: %s}
contexts:
- {name: tenant-ci, context: {cluster: tenant-ci, user: comment}}
users:
- name: comment
  user:
    client-certificate-data: %s
    client-key-data: %s # the key before: %s
`, server, base64.StdEncoding.EncodeToString(ca.CertPEM), d["comment.cert"], d["comment.key"], d["flow.key"])
	if s.Token != "" {
		fmt.Fprintf(&b, "    token: %s # rotated\n", s.Token)
	}
	flow := fmt.Sprintf("client-certificate-data: %s, client-key-data: %s", d["flow.cert"], d["flow.key"])
	if s.Password != "" {
		flow += fmt.Sprintf(", password: '%s'", s.Password)
	}
	if s.Username != "" {
		flow += ", username: " + s.Username
	}
	fmt.Fprintf(&b, "- name: flow\n  user: {%s}\n", flow)
	literal := d["literal.key"]
	var lines []string
	for len(literal) > 64 {
		lines, literal = append(lines, "      "+literal[:64]), literal[64:]
	}
	lines = append(lines, "      "+literal)
	fmt.Fprintf(&b, "- name: literal\n  user:\n    client-certificate-data: %s\n    client-key-data: |\n%s\n", d["literal.cert"], strings.Join(lines, "\n"))
	fmt.Fprintf(&b, "- name: folded\n  user:\n    client-certificate-data: %s\n    client-key-data: >-\n      %s\n", d["folded.cert"], d["folded.key"])
	fmt.Fprintf(&b, "- name: single\n  user: {client-certificate-data: '%s', client-key-data: '%s'}\n", d["single.cert"], d["single.key"])
	fmt.Fprintf(&b, "- name: double\n  user: {client-certificate-data: \"%s\", client-key-data: \"%s\"}\n", d["double.cert"], d["double.key"])
	fmt.Fprintf(&b, "- name: anchor\n  user: &base\n    client-certificate-data: %s\n    client-key-data: %s\n", d["anchor.cert"], d["anchor.key"])
	b.WriteString("- name: alias\n  user:\n    <<: *base\n")
	if s.AliasToken != "" {
		fmt.Fprintf(&b, "    token: %s\n", s.AliasToken)
	}
	if s.ExecArg != "" || s.ExecEnv != "" {
		fmt.Fprintf(&b, `- name: plugin
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: /usr/local/bin/credential-plugin
      args: ["--secret", %q]
      env: [{name: AWS_SECRET_ACCESS_KEY, value: %q}]
      interactiveMode: Never
`, s.ExecArg, s.ExecEnv)
	}
	return b.String(), keys, nil
}
