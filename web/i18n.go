package web

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/text/feature/plural"
	"golang.org/x/text/language"
)

// The dashboard speaks English and Japanese. Every text it shows is a message
// in i18n/<lang>.json, keyed by a stable id, written as a whole sentence with
// named placeholders ("{count} games"); a message that English counts is an
// object of plural forms ({"one": ..., "other": ...}, CLDR's names). Pages
// get it with {{t "key" "name" value ...}}, the scripts with t('key', {name:
// value}) from app.js, which reads the same catalog from the page. API error
// messages stay English: the dashboard picks its own words by their code.

//go:embed i18n/*.json
var catalogFiles embed.FS

// LangCookie remembers the language picked with the switch in the header.
const LangCookie = "taikai_lang"

// langs are the dashboard's languages, the default first.
var langs = []language.Tag{language.English, language.Japanese}

var langMatcher = language.NewMatcher(langs)

// langCodes are langs as the cookie, the catalog files and <html lang> name them.
var langCodes = []string{"en", "ja"}

// message is one catalog entry: a text, or the plural forms of one.
type message struct {
	text  string
	forms map[plural.Form]string // nil for a plain text
}

// catalog is one language's messages, with English filling any gap.
type catalog struct {
	lang string
	tag  language.Tag
	msgs map[string]message
	// browser is the catalog as the page hands it to the scripts.
	browser template.JS
}

var formNames = map[string]plural.Form{"zero": plural.Zero, "one": plural.One, "two": plural.Two, "few": plural.Few, "many": plural.Many, "other": plural.Other}

// readCatalog parses one language's file: {"key": "text" | {"one": ..., "other": ...}}.
func readCatalog(fsys fs.FS, lang string) (map[string]json.RawMessage, map[string]message, error) {
	b, err := fs.ReadFile(fsys, "i18n/"+lang+".json")
	if err != nil {
		return nil, nil, err
	}
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&raw); err != nil {
		return nil, nil, fmt.Errorf("i18n/%s.json: %w", lang, err)
	}
	msgs := make(map[string]message, len(raw))
	for key, v := range raw {
		var m message
		if err := json.Unmarshal(v, &m.text); err != nil {
			var forms map[string]string
			if err := json.Unmarshal(v, &forms); err != nil {
				return nil, nil, fmt.Errorf("i18n/%s.json: %s: a message is a string or an object of plural forms", lang, key)
			}
			m.forms = map[plural.Form]string{}
			for name, text := range forms {
				f, ok := formNames[name]
				if !ok {
					return nil, nil, fmt.Errorf("i18n/%s.json: %s: no plural form %q", lang, key, name)
				}
				m.forms[f] = text
			}
			if _, ok := m.forms[plural.Other]; !ok {
				return nil, nil, fmt.Errorf("i18n/%s.json: %s: plural forms lack \"other\"", lang, key)
			}
		}
		msgs[key] = m
	}
	return raw, msgs, nil
}

// loadCatalogs reads every language's catalog; a language's missing message
// falls back to English (the tests insist there is none).
func loadCatalogs(fsys fs.FS) (map[string]*catalog, error) {
	out := map[string]*catalog{}
	var enRaw map[string]json.RawMessage
	var enMsgs map[string]message
	for i, lang := range langCodes {
		raw, msgs, err := readCatalog(fsys, lang)
		if err != nil {
			return nil, err
		}
		if i == 0 {
			enRaw, enMsgs = raw, msgs
		}
		for k, v := range enRaw {
			if _, ok := raw[k]; !ok {
				raw[k], msgs[k] = v, enMsgs[k]
			}
		}
		b, err := json.Marshal(raw) // escapes <, > and &: safe inside <script>
		if err != nil {
			return nil, err
		}
		out[lang] = &catalog{lang: lang, tag: langs[i], msgs: msgs, browser: template.JS(b)}
	}
	return out, nil
}

// has tells whether the catalog has a message for key.
func (c *catalog) has(key string) bool {
	_, ok := c.msgs[key]
	return ok
}

// text is a message with its placeholders filled from args, pairs of a name
// and a value; "count" picks the plural form. A missing message or
// placeholder is an error, so that a template using one fails its test.
func (c *catalog) text(key string, args ...any) (string, error) {
	return c.format(key, func(v any) string { return fmt.Sprint(v) }, args...)
}

// html is text for a page: the message is escaped, and so is each value
// unless it is already template.HTML (a <code> from the code function).
func (c *catalog) html(key string, args ...any) (template.HTML, error) {
	s, err := c.format(key, func(v any) string {
		if h, ok := v.(template.HTML); ok {
			return string(h)
		}
		return template.HTMLEscapeString(fmt.Sprint(v))
	}, args...)
	return template.HTML(s), err
}

func (c *catalog) format(key string, show func(any) string, args ...any) (string, error) {
	m, ok := c.msgs[key]
	if !ok {
		return key, fmt.Errorf("no message %q", key)
	}
	if len(args)%2 != 0 {
		return key, fmt.Errorf("message %q: arguments are name, value pairs", key)
	}
	vals := map[string]any{}
	for i := 0; i < len(args); i += 2 {
		name, ok := args[i].(string)
		if !ok {
			return key, fmt.Errorf("message %q: argument %d is not a name", key, i)
		}
		vals[name] = indirect(args[i+1])
	}
	text := m.text
	if m.forms != nil {
		text = m.forms[plural.Other]
		if n, ok := vals["count"]; ok {
			i, err := strconv.Atoi(fmt.Sprint(n))
			if err == nil {
				if s, ok := m.forms[plural.Cardinal.MatchPlural(c.tag, i, 0, 0, 0, 0)]; ok {
					text = s
				}
			}
		}
	}
	var b strings.Builder
	for {
		before, name, after, ok := nextPlaceholder(text)
		if !ok {
			break
		}
		v, ok := vals[name]
		if !ok {
			return key, fmt.Errorf("message %q: no value for {%s}", key, name)
		}
		b.WriteString(show(literal(before)))
		b.WriteString(show(v))
		text = after
	}
	b.WriteString(show(literal(text)))
	return b.String(), nil
}

// indirect is the value a pointer points at, as templates print it.
func indirect(v any) any {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return ""
		}
		rv = rv.Elem()
	}
	if !rv.IsValid() {
		return ""
	}
	return rv.Interface()
}

// literal marks the message's own text, which html escapes like any value.
type literal string

func (l literal) String() string { return string(l) }

// placeholders lists the names in a message's braces, sorted, for the tests.
func placeholders(text string) []string {
	var out []string
	for {
		_, name, after, ok := nextPlaceholder(text)
		if !ok {
			break
		}
		out = append(out, name)
		text = after
	}
	sort.Strings(out)
	return out
}

// nextPlaceholder splits text at its first {name}: false if it has none.
func nextPlaceholder(text string) (before, name, after string, ok bool) {
	i := strings.IndexByte(text, '{')
	if i < 0 {
		return "", "", "", false
	}
	j := strings.IndexByte(text[i:], '}')
	if j < 0 {
		return "", "", "", false
	}
	return text[:i], text[i+1 : i+j], text[i+j+1:], true
}

// langOf picks the page's language: the switch's cookie, else the browser's
// Accept-Language (Japanese if it prefers it to English), else English.
func langOf(r *http.Request) string {
	if c, err := r.Cookie(LangCookie); err == nil {
		for _, l := range langCodes {
			if c.Value == l {
				return l
			}
		}
	}
	tags, _, err := language.ParseAcceptLanguage(r.Header.Get("Accept-Language"))
	if err != nil || len(tags) == 0 {
		return langCodes[0]
	}
	_, i, conf := langMatcher.Match(tags...)
	if conf == language.No {
		return langCodes[0]
	}
	return langCodes[i]
}
