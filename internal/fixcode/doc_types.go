package fixcode

// Doc is a document an encoder rendered: a drop-in, a TOML fragment, a
// manifest. It is printed as a block of its language, or fed to a
// command's standard input (Cmd.Stdin); only encoders make one.
type Doc struct {
	lang Lang
	text string
	err  error
}

// Lang is the language of a Doc.
type Lang string

const (
	LangSystemd  Lang = "systemd"
	LangTOML     Lang = "toml"
	LangManifest Lang = "yaml"
)

// Text is the document's text, or why it could not be rendered.
func (d Doc) Text() (string, error) {
	if d.err != nil {
		return "", d.err
	}
	return d.text, nil
}

// Lang is the document's language.
func (d Doc) Lang() Lang { return d.lang }

// newDoc checks what an encoder wrote: printable runes and newlines only,
// so that a terminal shows what is pasted.
func newDoc(lang Lang, text string, err error) Doc {
	if err == nil {
		err = printable(text, "\n")
	}
	if err != nil {
		return Doc{lang: lang, err: err}
	}
	return Doc{lang: lang, text: text}
}
