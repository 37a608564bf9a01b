package admin

import (
	_ "embed"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/julienschmidt/httprouter"
	"go.yaml.in/yaml/v3"
)

// openAPIYAML describes the admin API: OpenAPI 3.1, written by hand. The
// admin listener serves it as JSON at GET /openapi.json. TestOpenAPI holds
// it to the routes registered here and to the statuses the handlers answer.
//
//go:embed openapi.yaml
var openAPIYAML []byte

// OpenAPI returns the admin API's OpenAPI 3.1 description as JSON.
var OpenAPI = sync.OnceValues(func() ([]byte, error) {
	var doc any
	if err := yaml.Unmarshal(openAPIYAML, &doc); err != nil {
		return nil, err
	}
	return json.Marshal(doc)
})

func (s *Handler) openAPI(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	doc, err := OpenAPI()
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	_, _ = w.Write(doc)
}
