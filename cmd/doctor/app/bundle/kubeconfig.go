package bundle

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	pathpkg "path"
	"strings"

	"go.yaml.in/yaml/v3"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/socialwebcomputer/doctor/internal/redact"
)

// A kubeconfig is redacted by decoding it into YAML nodes and rewriting
// them, so a value is found by where it is in the document, not by how it
// is written: in a block or a flow mapping ({client-key-data: …}), plain,
// quoted, literal (|) or folded (>), behind an anchor, twice under one
// key, in a JSON kubeconfig, with a comment after it. Aliases are expanded
// first (within a bound), so every value has one place; comments, which
// no check reads and which can hold anything, are dropped. The document
// is encoded again and must still load with client-go's own decoder.
//
// Values stay where a check reads them (names, the server, paths, the
// impersonated identity, an exec plugin's command and variable names);
// inline certificates and keys are rewritten as PEM files are (fresh keys,
// certificates re-issued for them with the same subject, issuer, serial
// and validity); a token, a password, a user name, an exec plugin's
// arguments and variable values, an auth-provider's settings and every
// other string become stand-ins. URLs keep their host and lose their
// userinfo.

// maxKubeNodes bounds the YAML nodes of a kubeconfig, aliases expanded: a
// few aliases can name each other into billions of nodes.
const maxKubeNodes = 50000

// kubeDoc is a kubeconfig's documents as YAML nodes.
type kubeDoc struct{ docs []*yaml.Node }

// parseKubeconfig decodes every document of b into nodes, aliases
// expanded, anchors and comments dropped.
func parseKubeconfig(b []byte) (*kubeDoc, error) {
	d := yaml.NewDecoder(bytes.NewReader(b))
	k := &kubeDoc{}
	budget := maxKubeNodes
	for {
		var n yaml.Node
		err := d.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("the kubeconfig does not decode as YAML: %w", redact.QuotesDescribed(err))
		}
		root, err := expandAliases(&n, &budget, 0)
		if err != nil {
			return nil, err
		}
		k.docs = append(k.docs, root)
	}
	return k, nil
}

// expandAliases is a copy of n with every alias replaced by a copy of what
// it names, anchors and comments left out.
func expandAliases(n *yaml.Node, budget *int, depth int) (*yaml.Node, error) {
	if *budget--; *budget < 0 || depth > 1000 {
		return nil, fmt.Errorf("the kubeconfig has more than %d YAML nodes with its aliases expanded", maxKubeNodes)
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return nil, errors.New("the kubeconfig has an alias to nothing")
		}
		return expandAliases(n.Alias, budget, depth+1)
	}
	c := &yaml.Node{Kind: n.Kind, Style: n.Style, Tag: n.Tag, Value: n.Value, Line: n.Line, Column: n.Column}
	for _, e := range n.Content {
		ec, err := expandAliases(e, budget, depth+1)
		if err != nil {
			return nil, err
		}
		c.Content = append(c.Content, ec)
	}
	return c, nil
}

// kubeAction is what becomes of a scalar at a place in a kubeconfig.
type kubeAction int

const (
	standIn   kubeAction = iota // a stand-in of the same type
	keep                        // read by a check as it is
	keepURL                     // a URL: kept without its userinfo
	inlinePEM                   // base64 of PEM: keys and their certificates replaced
)

// kubePlaces are the places a check reads, by path ("[]" is any element of
// a list); every other string is stood in.
var kubePlaces = map[string]kubeAction{
	"apiVersion": keep, "kind": keep, "current-context": keep,
	"clusters.[].name":                               keep,
	"clusters.[].cluster.server":                     keepURL,
	"clusters.[].cluster.proxy-url":                  keepURL,
	"clusters.[].cluster.certificate-authority":      keep,
	"clusters.[].cluster.certificate-authority-data": inlinePEM,
	"clusters.[].cluster.tls-server-name":            keep,
	"contexts.[].name":                               keep,
	"contexts.[].context.cluster":                    keep,
	"contexts.[].context.user":                       keep,
	"contexts.[].context.namespace":                  keep,
	"users.[].name":                                  keep,
	"users.[].user.client-certificate":               keep,
	"users.[].user.client-key":                       keep,
	"users.[].user.tokenFile":                        keep,
	"users.[].user.client-certificate-data":          inlinePEM,
	"users.[].user.client-key-data":                  inlinePEM,
	"users.[].user.as":                               keep,
	"users.[].user.as-uid":                           keep,
	"users.[].user.as-groups.[]":                     keep,
	"users.[].user.exec.apiVersion":                  keep,
	"users.[].user.exec.command":                     keepURL,
	"users.[].user.exec.env.[].name":                 keep,
	"users.[].user.exec.interactiveMode":             keep,
	"users.[].user.auth-provider.name":               keep,
	"preferences.extensions.[].name":                 keep,
	"clusters.[].cluster.extensions.[].name":         keep,
	"users.[].user.exec.provideClusterInfo":          keep,
	"clusters.[].cluster.insecure-skip-tls-verify":   keep,
	"clusters.[].cluster.disable-compression":        keep,
	"contexts.[].context.extensions.[].name":         keep,
}

// pemValues are the decoded inline certificates and keys, for the
// stand-ins to be prepared before any file is rewritten.
func (k *kubeDoc) pemValues() [][]byte {
	var out [][]byte
	for _, d := range k.docs {
		walkKube(d, nil, func(path string, n *yaml.Node) {
			if kubePlaces[path] == inlinePEM {
				if raw, err := decodeInline(n.Value); err == nil {
					out = append(out, raw)
				}
			}
		})
	}
	return out
}

// tlsKeys are what a kubeconfig says are TLS client keys: its
// client-key-data values, and the files its client-key values name
// (relative ones resolved against the kubeconfig's own directory, as
// client-go resolves them).
func (k *kubeDoc) tlsKeys(file string) (inline [][]byte, files []string) {
	for _, d := range k.docs {
		walkKube(d, nil, func(path string, n *yaml.Node) {
			switch path {
			case "users.[].user.client-key-data":
				if raw, err := decodeInline(n.Value); err == nil {
					inline = append(inline, raw)
				}
			case "users.[].user.client-key":
				p := n.Value
				if p != "" && !strings.HasPrefix(p, "/") {
					p = pathpkg.Join(pathpkg.Dir(file), p)
				}
				if p != "" {
					files = append(files, pathpkg.Clean(p))
				}
			}
		})
	}
	return inline, files
}

// redact rewrites every scalar by its place, saying what it replaced.
func (k *kubeDoc) redact(si *standIns) []string {
	seen := map[string]bool{}
	var what []string
	note := func(w string) {
		if !seen[w] {
			seen[w] = true
			what = append(what, w)
		}
	}
	for _, d := range k.docs {
		walkKube(d, nil, func(path string, n *yaml.Node) {
			v := n.Value
			switch kubePlaces[path] {
			case keep:
				return
			case keepURL:
				n.Value = redactFreeText(v)
			case inlinePEM:
				raw, err := decodeInline(v)
				if err != nil {
					n.Value = redact.StandIn(v)
					break
				}
				if fresh := si.replace(raw); !bytes.Equal(fresh, raw) {
					n.Value = base64.StdEncoding.EncodeToString(fresh)
				}
			default:
				if n.Tag != "!!str" && n.Tag != "!!binary" {
					return // a number, a boolean, a date, null: the same type, nothing secret
				}
				n.Value = redact.StandIn(v)
			}
			if n.Value != v {
				n.Style, n.Tag = 0, "!!str"
				note(kubeWhat(path))
			}
		})
	}
	return what
}

// kubeWhat names what was replaced at path, for the manifest.
func kubeWhat(path string) string {
	name := path[strings.LastIndexByte(path, '.')+1:]
	if name == "[]" {
		name = strings.TrimSuffix(path, ".[]")
		name = name[strings.LastIndexByte(name, '.')+1:]
	}
	return "the kubeconfig's " + name
}

// encode writes the documents back as YAML; none (an empty file, or one
// of comments) is an empty file.
func (k *kubeDoc) encode() ([]byte, error) {
	if len(k.docs) == 0 {
		return nil, nil
	}
	var buf bytes.Buffer
	e := yaml.NewEncoder(&buf)
	e.SetIndent(2)
	for _, d := range k.docs {
		if err := e.Encode(d); err != nil {
			return nil, err
		}
	}
	if err := e.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// walkKube calls f with the path of every scalar under n: mapping keys
// joined by dots, "[]" for a list's elements. A merge key's (<<) mappings
// are walked where they are merged to.
func walkKube(n *yaml.Node, path []string, f func(string, *yaml.Node)) {
	switch n.Kind {
	case yaml.DocumentNode:
		for _, c := range n.Content {
			walkKube(c, path, f)
		}
	case yaml.SequenceNode:
		for _, c := range n.Content {
			walkKube(c, append(path, "[]"), f)
		}
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i], n.Content[i+1]
			if key.Tag == "!!merge" || key.Value == "<<" && key.Style == 0 {
				if val.Kind == yaml.SequenceNode {
					for _, m := range val.Content {
						walkKube(m, path, f)
					}
				} else {
					walkKube(val, path, f)
				}
				continue
			}
			if key.Kind != yaml.ScalarNode {
				// A complex key: no place a check reads.
				walkKube(key, append(path, "?"), f)
				walkKube(val, append(path, "?"), f)
				continue
			}
			walkKube(val, append(path, key.Value), f)
		}
	case yaml.ScalarNode:
		f(strings.Join(path, "."), n)
	}
}

// decodeInline decodes a *-data value: base64, which YAML may have folded
// over lines.
func decodeInline(v string) ([]byte, error) {
	return base64.StdEncoding.DecodeString(strings.Join(strings.Fields(v), ""))
}

// redactKubeconfig rewrites a kubeconfig with its secrets replaced; the
// result must still load with client-go's decoder, as the original did.
func redactKubeconfig(si *standIns, k *kubeDoc) ([]byte, []string, error) {
	what := k.redact(si)
	out, err := k.encode()
	if err != nil {
		return nil, nil, fmt.Errorf("the kubeconfig redacted does not encode: %w", err)
	}
	if _, err := clientcmd.Load(out); err != nil {
		return nil, nil, fmt.Errorf("the kubeconfig redacted does not load: %w", redact.QuotesDescribed(err))
	}
	return out, what, nil
}
