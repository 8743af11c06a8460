package runnerconfig

import (
	"bytes"
	"fmt"

	"github.com/BurntSushi/toml"
)

// Decode decodes config.toml text the way gitlab-runner v19.2.x does
// (toml.DecodeFile into its Config, which reads the whole file and decodes
// it like this).
//
// The error is BurntSushi/toml's, returned unchanged: its text is exactly
// what the runner reports after its "decoding configuration file: " prefix,
// for example
//
//	toml: line 9 (last key "runners.output_limit"): expected value but found '=' instead
//
// Syntax errors and most type errors are toml.ParseError values (use
// errors.As for the line); a few type mismatches are plain errors with the
// same "toml: line N (last key ...)" shape.
//
// The returned Config is never nil; after an error it holds whatever was
// decoded before the error. The MetaData is the library's: Undecoded() lists
// the keys the runner ignores (the runner itself never reports them), in
// file order, and Locate finds their lines.
//
// Decode sets no defaults: a key absent from the file leaves its zero value
// (the runner applies its defaults later, when each setting is used).
func Decode(data []byte) (*Config, toml.MetaData, error) {
	cfg := new(Config)
	md, err := toml.NewDecoder(bytes.NewReader(data)).Decode(cfg)
	return cfg, md, err
}

// LoadError wraps a Decode error the way gitlab-runner's LoadConfig does,
// giving the text the runner logs ("decoding configuration file: toml: ...").
// It returns nil for a nil error.
func LoadError(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("decoding configuration file: %w", err)
}

// FatalLine is the line `gitlab-runner run` ends with when its config does
// not load, as its own formatter prints it (without the colours it always
// adds): log/runner_formatter.go, gitlab-runner v19.3.0, pads the message to
// 50 - len("FATAL: ") columns, then writes " " and " error=<err>".
func FatalLine(err error) string {
	return fmt.Sprintf("FATAL: %-43s  error=%v", "Service run failed", err)
}
