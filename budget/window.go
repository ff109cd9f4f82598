package budget

import "strings"

// ModelInfo is what the plan needs to know about a model.
type ModelInfo struct {
	// Window is the context window in tokens: prompt and reply together.
	Window int
	// Family is the tokenizer family the estimate uses for the model.
	Family Family
	// Known reports that the model matched the table; when false the
	// values are the conservative defaults and the host should say so.
	Known bool
}

// DefaultWindow is the window assumed for a model the table does not know:
// small enough for the usual local models, large enough to be useful.
const DefaultWindow = 32_768

// knownModels maps a model name prefix to its window and family, longest
// prefix first within each vendor, as the providers publish them. Local
// models served by Ollama get Ollama's default context (num_ctx), not the
// model's native one, because that is what the server will accept unless
// it was configured otherwise; the override says when it was.
var knownModels = []struct {
	prefix string
	info   ModelInfo
}{
	// OpenAI.
	{"gpt-4.1", ModelInfo{Window: 1_047_576, Family: FamilyO200k}},
	{"gpt-4o", ModelInfo{Window: 128_000, Family: FamilyO200k}},
	{"gpt-4-turbo", ModelInfo{Window: 128_000, Family: FamilyCL100k}},
	{"gpt-4", ModelInfo{Window: 8_192, Family: FamilyCL100k}},
	{"gpt-3.5-turbo", ModelInfo{Window: 16_385, Family: FamilyCL100k}},
	{"gpt-5", ModelInfo{Window: 400_000, Family: FamilyO200k}},
	{"o1", ModelInfo{Window: 200_000, Family: FamilyO200k}},
	{"o3", ModelInfo{Window: 200_000, Family: FamilyO200k}},
	{"o4-mini", ModelInfo{Window: 200_000, Family: FamilyO200k}},
	// Zhipu GLM.
	{"glm-4-long", ModelInfo{Window: 1_000_000, Family: FamilyCJKDense}},
	{"glm-4-flash", ModelInfo{Window: 128_000, Family: FamilyCJKDense}},
	{"glm-4-plus", ModelInfo{Window: 128_000, Family: FamilyCJKDense}},
	{"glm-4-air", ModelInfo{Window: 128_000, Family: FamilyCJKDense}},
	{"glm-4.5", ModelInfo{Window: 128_000, Family: FamilyCJKDense}},
	{"glm-4", ModelInfo{Window: 128_000, Family: FamilyCJKDense}},
	// DeepSeek: the API serves 64k on deepseek-chat and deepseek-reasoner
	// (V3/R1), 128k from V3.1 on.
	{"deepseek-chat", ModelInfo{Window: 65_536, Family: FamilyCJKDense}},
	{"deepseek-reasoner", ModelInfo{Window: 65_536, Family: FamilyCJKDense}},
	{"deepseek-v3.1", ModelInfo{Window: 131_072, Family: FamilyCJKDense}},
	{"deepseek", ModelInfo{Window: 65_536, Family: FamilyCJKDense}},
	// Qwen.
	{"qwen-long", ModelInfo{Window: 1_000_000, Family: FamilyCJKDense}},
	{"qwen-turbo", ModelInfo{Window: 1_000_000, Family: FamilyCJKDense}},
	{"qwen-plus", ModelInfo{Window: 131_072, Family: FamilyCJKDense}},
	{"qwen-max", ModelInfo{Window: 32_768, Family: FamilyCJKDense}},
	{"qwen", ModelInfo{Window: 32_768, Family: FamilyCJKDense}},
	// Moonshot.
	{"moonshot-v1-128k", ModelInfo{Window: 128_000, Family: FamilyCJKDense}},
	{"moonshot-v1-32k", ModelInfo{Window: 32_000, Family: FamilyCJKDense}},
	{"moonshot-v1-8k", ModelInfo{Window: 8_000, Family: FamilyCJKDense}},
	{"kimi", ModelInfo{Window: 128_000, Family: FamilyCJKDense}},
	// Anthropic through an OpenAI-compatible endpoint; its tokenizer is
	// its own, the Calibrator corrects o200k's weights.
	{"claude", ModelInfo{Window: 200_000, Family: FamilyO200k}},
	// Google.
	{"gemini", ModelInfo{Window: 1_048_576, Family: FamilyO200k}},
	// Mistral.
	{"mistral-large", ModelInfo{Window: 128_000, Family: FamilyO200k}},
	{"mistral", ModelInfo{Window: 32_768, Family: FamilyO200k}},
	// Local models (Ollama's default num_ctx; see above).
	{"llama", ModelInfo{Window: 8_192, Family: FamilyO200k}},
	{"gemma", ModelInfo{Window: 8_192, Family: FamilyO200k}},
	{"phi", ModelInfo{Window: 8_192, Family: FamilyO200k}},
}

// LookupModel returns what the table knows of a model by name. The name
// is matched case-insensitively by prefix after dropping a provider prefix
// ("openai/gpt-4o", "ollama:llama3.1"), so dated versions (gpt-4o-2024-08-06)
// and sizes (qwen2.5:7b) match their family. Unknown models get
// DefaultWindow and o200k's weights, with Known false.
func LookupModel(name string) ModelInfo {
	n := strings.ToLower(strings.TrimSpace(name))
	if i := strings.LastIndexByte(n, '/'); i >= 0 {
		n = n[i+1:]
	}
	best := match(n)
	if i := strings.Index(n, ":"); best < 0 && i >= 0 {
		// "ollama:llama3" names the provider first; "qwen2.5:7b" and
		// "gemma:latest" matched above by their first part.
		best = match(n[i+1:])
	}
	if best < 0 {
		return ModelInfo{Window: DefaultWindow, Family: FamilyO200k}
	}
	info := knownModels[best].info
	info.Known = true
	return info
}

// Window returns the context window to plan against: override when it is
// positive (the config or a flag), the table's value otherwise.
func Window(name string, override int) int {
	if override > 0 {
		return override
	}
	return LookupModel(name).Window
}

// match returns the index of the longest known prefix of n, or -1.
func match(n string) int {
	best := -1
	for i, m := range knownModels {
		if strings.HasPrefix(n, m.prefix) && (best < 0 || len(m.prefix) > len(knownModels[best].prefix)) {
			best = i
		}
	}
	return best
}
