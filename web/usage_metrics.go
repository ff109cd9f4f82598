package web

import "github.com/agentapp/agentapp/host"

// tokenMetrics expose the host's token counts (every model call of every
// front end in this process, estimated counts included) as counters by
// model and kind, read from the host at each scrape, so a turn that failed
// after its calls is counted too.
type tokenMetrics struct{ h *host.Host }

const (
	tokensMetric          = "agentapp_model_tokens_total"
	estimatedTokensMetric = "agentapp_model_estimated_tokens_total"
)

func (t tokenMetrics) metricName() string { return tokensMetric }

func (t tokenMetrics) appendText(b []byte) []byte {
	if t.h == nil {
		return b
	}
	counts := t.h.TokenCounts()
	if len(counts) == 0 {
		return b
	}
	for _, m := range []struct {
		name, help string
		value      func(host.TokenCount) int64
	}{
		// estimated sorts before tokens, as client_golang orders names.
		{estimatedTokensMetric, "Tokens of model calls the provider did not count, estimated by agentapp, by model and kind (input, output); included in " + tokensMetric + ".",
			func(c host.TokenCount) int64 { return c.Estimated }},
		{tokensMetric, "Tokens of model calls by model and kind (input, output), as the provider reported them or estimated where it did not.",
			func(c host.TokenCount) int64 { return c.Tokens }},
	} {
		b = appendHeader(b, m.name, m.help, "counter")
		for _, c := range counts {
			b = append(b, m.name...)
			b = append(b, '{')
			b = appendLabel(b, "kind", c.Kind)
			b = append(b, ',')
			b = appendLabel(b, "model", c.Model)
			b = append(b, "} "...)
			b = appendFloat(b, float64(m.value(c)))
			b = append(b, '\n')
		}
	}
	return b
}
