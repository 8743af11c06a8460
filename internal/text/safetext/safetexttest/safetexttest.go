// Package safetexttest holds what the renderers' tests assert of their
// output: terminal text with no character safetext would have escaped, and
// markdown in which GitLab would find no quick action, no mention, no raw
// HTML, no link and no table cell that the report did not write.
package safetexttest

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	xhtml "golang.org/x/net/html"

	"github.com/socialwebcomputer/doctor/internal/text/safetext"
)

// Terminal is "" when out holds no character safetext.Line escapes other
// than those in keep (the renderer's own newlines, and tabs where it writes
// them), else what and where the first one is.
func Terminal(out, keep string) string {
	i := safetext.Bad(out, keep)
	if i < 0 {
		return ""
	}
	lo, hi := max(0, i-40), min(len(out), i+40)
	return fmt.Sprintf("unfit byte %#x at %d: …%q…", out[i], i, out[lo:hi])
}

// Parser is CommonMark with GitLab's tables, strikethrough and autolinks
// (goldmark's Linkify: a bare URL, a www. address or an e-mail address
// becomes a link, as GitLab's comrak with its autolink extension makes
// one), and raw HTML passed through as GitLab's sanitiser would then see
// it.
var Parser = goldmark.New(goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.Linkify),
	goldmark.WithRendererOptions(html.WithUnsafe()))

// Markdown parses md as GitLab's markdown would and returns the document
// and every problem found in it:
//
//   - a character safetext escapes (newline and tab aside);
//   - a line that starts with / (GitLab reads a quick action from each raw
//     line, before markdown, lib/gitlab/quick_actions/extractor.rb) or
//     with @, anywhere, code blocks included;
//   - a table row whose cells are not its header's: pipes counted as
//     cmark-gfm and comrak count them (a backslash escapes the character
//     after it, so \\| ends a cell), which GitLab renders with;
//   - raw HTML, but the blocks html allows (the report's own <details>);
//   - a link, an image or an autolink (a bare URL, www. or an e-mail
//     address included: Linkify);
//   - in the rendered HTML's text outside code, pre and links (what
//     GitLab's reference, emoji and table-of-contents filters read), a
//     mention (an @ followed by a name character with no word character
//     before it, User.reference_pattern) or anything else GitLab forms
//     there (References).
func Markdown(md []byte, html func(block string) bool) (ast.Node, []string) {
	var problems []string
	add := func(format string, a ...any) { problems = append(problems, fmt.Sprintf(format, a...)) }
	if p := Terminal(string(md), "\n\t"); p != "" {
		add("%s", p)
	}
	lines := strings.Split(string(md), "\n")
	cells := -1 // separators of the current table's header
	for n, l := range lines {
		if strings.HasPrefix(l, "/") || strings.HasPrefix(l, "@") {
			add("line %d starts with %q: %q", n+1, l[:1], l)
		}

		if !strings.HasPrefix(l, "|") {
			cells = -1
			continue
		}
		if c := pipes(l); cells < 0 {
			cells = c
		} else if c != cells {
			add("line %d: a table row of %d cells under a header of %d: %q", n+1, c-1, cells-1, l)
		}
	}
	doc := Parser.Parser().Parse(text.NewReader(md))
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n.Kind() {
		case ast.KindRawHTML:
			add("raw HTML inline: %q", n.(*ast.RawHTML).Segments.Value(md))
		case ast.KindHTMLBlock:
			b := n.(*ast.HTMLBlock)
			raw := string(b.Lines().Value(md))
			if b.HasClosure() {
				raw += string(b.ClosureLine.Value(md))
			}
			if html == nil || !html(raw) {
				add("raw HTML block: %q", raw)
			}
		case ast.KindLink, ast.KindImage:
			add("a %s: %q", n.Kind(), inner(n, md))
		case ast.KindAutoLink:
			add("an autolink: %q", n.(*ast.AutoLink).URL(md))
		case ast.KindParagraph, ast.KindTextBlock, ast.KindHeading:
			// GitLab's table of contents is a paragraph's source, emphasis
			// and all ([[<em>TOC</em>]] once rendered).
			for i := 0; i < n.Lines().Len(); i++ {
				seg := n.Lines().At(i)
				if m := tocTag.FindString(withoutCode(string(seg.Value(md)))); m != "" {
					add("GitLab forms a table of contents: %q", m)
				}
			}
		}
		return ast.WalkContinue, nil
	})
	var out bytes.Buffer
	if err := Parser.Renderer().Render(&out, md, doc); err != nil {
		add("render: %v", err)
	}
	for _, m := range Mentions(out.Bytes()) {
		add("a mention in the rendered text: %q", m)
	}
	for _, m := range References(out.Bytes()) {
		add("GitLab forms %s in the rendered text: %q", m[0], m[1])
	}
	return doc, problems
}

// gitlabForms are what GitLab's filters form of a text node outside code,
// pre and links, by the patterns of its models and filters (app/models:
// Issue, MergeRequest, Snippet, Epic, Milestone, Label, Commit,
// Vulnerability, Iteration, AlertManagement::Alert .reference_pattern,
// each behind an optional Project.reference_pattern, group/project; the
// Jira integration's issue key; Banzai's EmojiFilter and
// TableOfContentsTagFilter; comrak's autolinks): a pattern a little wider
// than each, so that what passes forms nothing.
var gitlabForms = []struct {
	what string
	re   *regexp.Regexp
}{
	{"an issue, merge request, snippet, epic or milestone reference", regexp.MustCompile(`[#!$&%]\d`)},
	{"a label reference", regexp.MustCompile(`~[A-Za-z0-9_\-?.&"]`)},
	{"a milestone reference by name", regexp.MustCompile(`%[A-Za-z0-9_"]`)},
	{"an iteration, vulnerability, feature flag, work item, wiki page or alert reference",
		regexp.MustCompile(`\*iteration:|\[(?:vulnerability|feature_flag|work_item|wiki_page|issue|merge_request):|\^alert#`)},
	{"a table of contents", regexp.MustCompile(`\[\[_TOC_\]\]|\[TOC\]`)},
	{"an emoji", regexp.MustCompile(`:[a-z0-9_+\-]+:`)},
	{"a commit reference", regexp.MustCompile(`(?:^|[^0-9A-Za-z_])[0-9a-fA-F]{6,40}(?:$|[^0-9A-Za-z_])`)},
	{"an external tracker's issue reference", regexp.MustCompile(`\b[A-Z][A-Z_0-9]+-[0-9]+`)},
	{"an autolink", regexp.MustCompile(`(?i)\bwww\.|[a-z][a-z0-9+.\-]*://|[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]`)},
}

// tocTag is GitLab's table-of-contents tag in markdown source.
var tocTag = regexp.MustCompile(`\[\[_TOC_\]\]|\[TOC\]`)

// withoutCode is a line with its code spans (as CommonMark reads
// backticks) left out.
func withoutCode(l string) string {
	var b strings.Builder
	for i := 0; i < len(l); {
		if l[i] != '`' {
			b.WriteByte(l[i])
			i++
			continue
		}
		n := run(l[i:])
		end := -1
		for j := i + n; j < len(l); {
			if l[j] != '`' {
				j++
				continue
			}
			if m := run(l[j:]); m == n {
				end = j
				break
			} else {
				j += m
			}
		}
		if end < 0 {
			b.WriteString(l[i : i+n])
			i += n
			continue
		}
		i = end + n
	}
	return b.String()
}

func run(s string) int {
	n := 0
	for n < len(s) && s[n] == '`' {
		n++
	}
	return n
}

// References are what GitLab would form in rendered HTML's text nodes
// outside code, pre, kbd, links, scripts and styles, each text node whole
// (as Nokogiri merges it): what each is, and the text matched.
func References(page []byte) [][2]string {
	root, err := xhtml.Parse(bytes.NewReader(page))
	if err != nil {
		return [][2]string{{"nothing", "unparseable HTML: " + err.Error()}}
	}
	var out [][2]string
	var walk func(n *xhtml.Node)
	walk = func(n *xhtml.Node) {
		if n.Type == xhtml.ElementNode {
			switch n.Data {
			case "code", "pre", "kbd", "a", "script", "style":
				return
			}
		}
		if n.Type == xhtml.TextNode {
			for _, f := range gitlabForms {
				for _, m := range f.re.FindAllString(n.Data, -1) {
					out = append(out, [2]string{f.what, m})
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return out
}

// pipes counts the cell separators of a table row as cmark-gfm's scanner
// does: a backslash and the ASCII punctuation after it are one escaped
// character.
func pipes(l string) int {
	n := 0
	for i := 0; i < len(l); i++ {
		switch {
		case l[i] == '\\' && i+1 < len(l) && isPunct(l[i+1]):
			i++
		case l[i] == '|':
			n++
		}
	}
	return n
}

func isPunct(c byte) bool {
	return c < 0x80 && strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", c) >= 0
}

// inner is the source text of n's descendants.
func inner(n ast.Node, src []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := c.(*ast.Text); ok && entering {
			b.Write(t.Segment.Value(src))
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// mention is GitLab's user and group reference: @ and a path, with no word
// character before it.
var mention = regexp.MustCompile(`(?:^|[^A-Za-z0-9_])(@[A-Za-z0-9_.][A-Za-z0-9_.\-/]*)`)

// Mentions are the @names GitLab would take for mentions in rendered HTML:
// those in its text nodes outside code, pre, kbd, links, scripts and
// styles (Banzai's reference filters skip those ancestors), each text node
// whole, as Nokogiri merges it.
func Mentions(page []byte) []string {
	root, err := xhtml.Parse(bytes.NewReader(page))
	if err != nil {
		return []string{"unparseable HTML: " + err.Error()}
	}
	var out []string
	var walk func(n *xhtml.Node)
	walk = func(n *xhtml.Node) {
		if n.Type == xhtml.ElementNode {
			switch n.Data {
			case "code", "pre", "kbd", "a", "script", "style":
				return
			}
		}
		if n.Type == xhtml.TextNode {
			for _, m := range mention.FindAllStringSubmatch(n.Data, -1) {
				out = append(out, m[1])
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(root)
	return out
}

// Count is how many nodes of kind the document has.
func Count(doc ast.Node, kind ast.NodeKind) int {
	n := 0
	_ = ast.Walk(doc, func(node ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering && node.Kind() == kind {
			n++
		}
		return ast.WalkContinue, nil
	})
	return n
}

// Headings counts the headings of one level.
func Headings(doc ast.Node, level int) int {
	n := 0
	_ = ast.Walk(doc, func(node ast.Node, entering bool) (ast.WalkStatus, error) {
		if h, ok := node.(*ast.Heading); ok && entering && h.Level == level {
			n++
		}
		return ast.WalkContinue, nil
	})
	return n
}
