package report

import (
	"strings"

	"github.com/socialwebcomputer/doctor/checks"
	"github.com/socialwebcomputer/doctor/internal/text/wrap"
)

// StepLines is a fix's steps as terminal lines: each sentence wrapped at
// width with prose before every line (a "# " keeps a whole fix pasteable
// into a shell, a Caddyfile, a drop-in, config.toml or a manifest, where #
// begins a comment in each), each block's lines whole and at column 0, as
// they are pasted: a heredoc's end line closes it, a command is never cut.
func StepLines(steps checks.Steps, width int, prose string) []string {
	var out []string
	for _, s := range steps {
		text := strings.TrimRight(s.Text, "\n")
		if s.Kind != checks.KindText {
			out = append(out, strings.Split(text, "\n")...)
			continue
		}
		for _, l := range strings.Split(text, "\n") {
			out = append(out, wrap.Words(l, width, prose, prose)...)
		}
	}
	return out
}

// fenceLanguage is the info string of a block's markdown fence: what
// GitLab's and GitHub's highlighters call the kind.
func fenceLanguage(k checks.Kind) string {
	switch k {
	case checks.KindShell:
		return "sh"
	case checks.KindCaddyfile:
		return "caddyfile"
	case checks.KindDropIn:
		return "ini"
	case checks.KindTOML:
		return "toml"
	case checks.KindManifest:
		return "yaml"
	}
	return ""
}

// CatalogSteps is a catalog fix in the README's markdown: doctor's own
// words, so its sentences are written as they are, and each block is fenced
// with its kind's language.
func CatalogSteps(steps checks.Steps) string {
	var parts []string
	for _, s := range steps {
		if s.Kind == checks.KindText {
			parts = append(parts, s.Text)
			continue
		}
		parts = append(parts, fenceLang(s.Text, fenceLanguage(s.Kind)))
	}
	return strings.Join(parts, "\n\n")
}

// markdownSteps is a fix in markdown: each sentence a paragraph, each
// block fenced with its kind's language.
func markdownSteps(steps checks.Steps) string {
	var parts []string
	for _, s := range steps {
		if s.Kind == checks.KindText {
			for _, l := range strings.Split(strings.TrimRight(s.Text, "\n"), "\n") {
				parts = append(parts, mdLineStart(mdText(l)))
			}
			continue
		}
		parts = append(parts, fenceLang(indentQuickActions(s.Text), fenceLanguage(s.Kind)))
	}
	return strings.Join(parts, "\n\n")
}
