package web

import (
	"html/template"
	"net/http"

	"github.com/go-chi/chi/v5"
)

// pages are the dashboard's server-rendered pages.
type pages struct {
	t *template.Template
}

func loadPages() (*pages, error) {
	t, err := template.New("index").Parse(`<!doctype html><title>taikai</title><h1>taikai</h1>`)
	if err != nil {
		return nil, err
	}
	return &pages{t: t}, nil
}

func (p *pages) routes(r chi.Router, s *Server) {
	r.Get("/", func(w http.ResponseWriter, r *http.Request) {
		_ = p.t.Execute(w, nil)
	})
}
