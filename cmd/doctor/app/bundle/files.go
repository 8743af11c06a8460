package bundle

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/socialwebcomputer/doctor/checks/facts/hostfacts"
	"github.com/socialwebcomputer/doctor/internal/hostio"
	"github.com/socialwebcomputer/doctor/internal/redact"
	"github.com/socialwebcomputer/doctor/internal/source/sshkey"
	"github.com/socialwebcomputer/doctor/internal/source/systemd"
)

// Each file's copy is redacted by decoding it as the checks did (its
// FileRecord.Kind, noted by the reader): config.toml by its TOML keys
// (configtoml.go), a kubeconfig by its YAML nodes (kubeconfig.go), an
// environ by its variables, PEM by its blocks, a token file whole. A file
// that does not decode, for the checks or for the writer, is not copied:
// the bundle keeps a description of it (its size, its lines, the error
// with the values it quotes described), and replay answers the checks'
// decode with the failure the live run recorded (hostio.Decode). A
// systemd unit and an environment file keep their assignments' names, and
// values only where a check reads them (systemd.RedactUnit). Files read
// without a kind (/etc/hosts) are redacted by patterns, which stay the
// net under every kind.

// fileCopy is one file's content on its way into the bundle.
type fileCopy struct {
	path string
	rec  *hostio.FileRecord
	kube *kubeDoc // a kubeconfig, decoded
	err  error    // why the writer cannot redact it by decoding
}

// prepare decodes what needs decoding and returns the PEM material in it,
// so the stand-in keys exist before any file is rewritten (a certificate
// in one file and its key in another must still match).
func (f *fileCopy) prepare() [][]byte {
	b := f.rec.Content
	switch {
	case f.rec.Undecodable != nil:
		return nil
	case f.rec.Kind == hostio.KindKubeconfig:
		f.kube, f.err = parseKubeconfig(b)
		if f.err != nil {
			return nil
		}
		return f.kube.pemValues()
	case f.rec.Kind == hostio.KindPEM:
		return [][]byte{b}
	}
	out := [][]byte{b}
	for _, m := range dataLine().FindAllSubmatch(b, -1) {
		if raw, err := base64.StdEncoding.DecodeString(string(m[3])); err == nil {
			out = append(out, raw)
		}
	}
	return out
}

// redact is the file's content as the bundle keeps it, and what was
// replaced in it.
func (f *fileCopy) redact(si *standIns) ([]byte, []string) {
	b, r := f.rec.Content, f.rec
	if r.Undecodable != nil {
		return describeUndecodable(f.path, r.Kind, b, r.Undecodable.Err.Msg), []string{"the whole file: it does not decode as " + string(r.Kind)}
	}
	var out []byte
	var what []string
	err := f.err
	if err == nil {
		switch r.Kind {
		case hostio.KindConfigTOML:
			out, what, err = redactConfigTOML(b)
		case hostio.KindKubeconfig:
			out, what, err = redactKubeconfig(si, f.kube)
		case hostio.KindEnviron:
			out, what = redactEnviron(b)
		case hostio.KindPEM:
			out, what = redactPEMFile(si, f.path, b)
		case hostio.KindToken:
			out, what = []byte(redact.StandIn(strings.TrimSpace(string(b)))), []string{"the whole file"}
		case hostio.KindSystemdUnit, hostio.KindEnvironmentFile:
			redactUnit := func(file string, data []byte, keep func(string) bool, standIn func(string) string) ([]byte, error) {
				return systemd.RedactUnit(file, data, keep, standIn, unitArgv)
			}
			if r.Kind == hostio.KindEnvironmentFile {
				redactUnit = systemd.RedactEnvFile
			}
			if out, err = redactUnit(f.path, b, hostfacts.ProcessVariableRead, redact.StandIn); err == nil {
				// The net under it: ExecStart's flags, URL userinfo.
				var net []string
				if !bytes.Equal(out, b) {
					what = []string{"values of variables no check reads, and comments"}
				}
				out, net = redactFile(si, f.path, out)
				what = append(what, net...)
			}
		default:
			out, what = redactFile(si, f.path, b)
		}
	}
	if err != nil {
		// Not kept: what cannot be decoded cannot be redacted by decoding.
		return describeUndecodable(f.path, r.Kind, b, "doctor could not redact it by decoding: "+err.Error()),
			[]string{"the whole file: doctor could not redact it by decoding"}
	}
	return out, what
}

// unitArgv is what a bundle keeps of an ExecStart= command line: what
// redact.Argv keeps (facts reads the unit's ExecStart the same way), a word
// that refers to a variable left for systemd to expand from the unit's
// environment, whose values are redacted on their own.
func unitArgv(words []string) []string {
	return redact.Argv(words, func(v string) string {
		if strings.Contains(strings.ReplaceAll(v, "$$", ""), "$") {
			return v
		}
		return redact.StandIn(v)
	})
}

// describeUndecodable is what a bundle keeps of a file that did not
// decode, in place of its content: its size, its lines and why, the values
// the message quotes described.
func describeUndecodable(p string, kind hostio.FileKind, content []byte, why string) []byte {
	lines := bytes.Count(content, []byte("\n"))
	if len(content) > 0 && content[len(content)-1] != '\n' {
		lines++
	}
	if kind == "" {
		kind = "what the checks read it as"
	}
	return fmt.Appendf(nil, "doctor bundle: %s (%d bytes, %d lines) did not decode as %s: %s; its content is not kept.\n",
		p, len(content), lines, kind, redact.Text(redact.DescribeQuoted(why)))
}

// redactEnviron keeps of an environ (NAME=value\0…) the names, and the
// values only of the variables a check reads (hostfacts.ProcessVariableRead),
// without URL userinfo; every other value is a stand-in. The block keeps
// its shape: the same entries, NULs where they were.
func redactEnviron(b []byte) ([]byte, []string) {
	parts := bytes.Split(b, []byte{0})
	replaced := false
	for i, p := range parts {
		name, val, ok := strings.Cut(string(p), "=")
		if !ok {
			continue
		}
		nv := redact.StandIn(val)
		if hostfacts.ProcessVariableRead(name) {
			nv = redactFreeText(val)
		}
		if nv != val {
			parts[i], replaced = []byte(name+"="+nv), true
		}
	}
	if !replaced {
		return b, nil
	}
	return bytes.Join(parts, []byte{0}), []string{"the values of variables no check reads"}
}

// redactPEMFile keeps of a PEM file its blocks, keys replaced by their
// stand-ins and certificates of those keys re-issued; text around the
// blocks, which no check reads, is not kept. A file with no block is
// described.
func redactPEMFile(si *standIns, p string, b []byte) ([]byte, []string) {
	blocks := pemBlock().FindAll(b, -1)
	if k, err := sshkey.Parse(b); len(blocks) == 0 && err == nil && !k.Private {
		return b, nil // an authorized_keys line: a public key
	}
	if len(blocks) == 0 {
		return describeUndecodable(p, hostio.KindPEM, b, "no PEM block"), []string{"the whole file: no PEM block in it"}
	}
	var out, kept []byte
	for _, blk := range blocks {
		kept = append(kept, blk...)
		out = append(out, si.replace(blk)...)
		if out[len(out)-1] != '\n' {
			out = append(out, '\n')
		}
	}
	var what []string
	if !bytes.Equal(out, kept) {
		what = append(what, "PEM keys and certificates")
	}
	if !bytes.Equal(kept, b) {
		what = append(what, "text outside PEM blocks")
	}
	return out, what
}

// redactFiles copies the tape's file records with every content redacted,
// noting in notes what was replaced where.
func redactFiles(si *standIns, recs map[string]*hostio.FileRecord, notes map[string]bool) map[string]*hostio.FileRecord {
	var copies []*fileCopy
	var material [][]byte
	files := map[string]*hostio.FileRecord{}
	for p, r := range recs {
		c := *r
		files[p] = &c
		if c.Read {
			f := &fileCopy{path: p, rec: &c}
			copies = append(copies, f)
			material = append(material, f.prepare()...)
		}
	}
	for _, m := range material {
		si.prepareCerts(m)
	}
	// A kubeconfig's client keys are TLS keys, certified or not.
	for _, f := range copies {
		if f.kube == nil {
			continue
		}
		inline, named := f.kube.tlsKeys(f.path)
		for _, b := range inline {
			si.prepareTLSKeys(b)
		}
		for _, p := range named {
			if r := files[p]; r != nil && r.Read && r.Undecodable == nil {
				si.prepareTLSKeys(r.Content)
			}
		}
	}
	for _, m := range material {
		si.prepare(m)
	}
	for _, f := range copies {
		var what []string
		f.rec.Content, what = f.redact(si)
		f.rec.Redacted = what
		for _, w := range what {
			notes[w+" in "+f.path] = true
		}
	}
	return files
}
