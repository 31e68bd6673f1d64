package framework

import (
	"encoding/json"
	"net/http"
)

// fetchRequest asks a receiver to take cached partitions from a giver
// (iSpark's cache-preserving scale-down): spill Evict to disk first, then
// GET each of Names from From's block endpoint and keep it.
type fetchRequest struct {
	From  string   `json:"from_url"`
	Names []string `json:"names"`
	Evict []string `json:"evict,omitempty"`
}

// fetchReply names the blocks the receiver now holds, with their sizes,
// and the first error met (the giver gone, say). The driver reads a
// partition from the receiver only if it is named here.
type fetchReply struct {
	Held  []string `json:"held"`
	Bytes int64    `json:"bytes"`
	Error string   `json:"error,omitempty"`
}

// handleFetch serves POST /fetch. Blocks are fetched one at a time, in the
// order given (the driver sends VIP partitions, then the highest ids,
// first), and a failed fetch ends the request: a giver that died
// mid-handoff will not answer the next one either.
func (e *Executor) handleFetch(w http.ResponseWriter, r *http.Request) {
	var req fetchRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, "bad fetch: "+err.Error(), http.StatusBadRequest)
		return
	}
	for _, name := range req.Evict {
		e.blocks.spill(name)
	}
	var rep fetchReply
	for _, name := range req.Names {
		if e.blocks.has(name) {
			rep.Held = append(rep.Held, name)
			continue
		}
		b, err := e.fetch(req.From, name)
		if err != nil {
			rep.Error = err.Error()
			break
		}
		e.blocks.put(name, b)
		rep.Held = append(rep.Held, name)
		rep.Bytes += int64(len(b))
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(rep)
}
