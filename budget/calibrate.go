package budget

import "sync"

// Calibrator learns how far the estimate is from a provider's own count:
// after each call the host tells it the estimate of the request it sent and
// the prompt tokens the provider reported, and Adjust scales later
// estimates by the smoothed ratio. It corrects what the weights cannot
// know: a model's own tokenizer (GLM, Qwen, DeepSeek) and the provider's
// rendering of tool definitions.
//
// The ratio moves slowly (an exponential average) and stays within bounds,
// so one odd reading (a cached prompt, a provider that counts differently)
// cannot make the plan wildly wrong. It is safe for concurrent use.
type Calibrator struct {
	mu      sync.Mutex
	opts    CalibratorOptions
	ratio   float64
	samples int
}

// CalibratorOptions tune a Calibrator. A nil *CalibratorOptions, or a zero
// field, means the default.
type CalibratorOptions struct {
	// Weight is how much one observation moves the ratio (default 0.2).
	Weight float64
	// Min and Max bound the ratio (defaults 0.5 and 2): beyond them the
	// reading is more likely wrong than the estimate.
	Min, Max float64
	// MinTokens ignores requests smaller than this estimate (default 200):
	// on tiny requests the fixed overheads dominate the ratio.
	MinTokens int
}

// NewCalibrator returns a calibrator at ratio 1.
func NewCalibrator(opts *CalibratorOptions) *Calibrator {
	var o CalibratorOptions
	if opts != nil {
		o = *opts
	}
	if o.Weight <= 0 || o.Weight > 1 {
		o.Weight = 0.2
	}
	if o.Min <= 0 {
		o.Min = 0.5
	}
	if o.Max <= 0 {
		o.Max = 2
	}
	if o.Max < o.Min {
		o.Max = o.Min
	}
	if o.MinTokens <= 0 {
		o.MinTokens = 200
	}
	return &Calibrator{opts: o, ratio: 1}
}

// Observe records one call: estimated is our estimate of the request,
// reported the provider's prompt tokens for it. It reports whether the
// observation was used; readings without a count, and small requests, are
// not.
func (c *Calibrator) Observe(estimated, reported int) bool {
	if c == nil || reported <= 0 || estimated < c.opts.MinTokens {
		return false
	}
	r := float64(reported) / float64(estimated)
	r = min(max(r, c.opts.Min), c.opts.Max)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.samples == 0 {
		// The first reading replaces the prior outright: it is the only
		// evidence there is about this model.
		c.ratio = r
	} else {
		c.ratio += c.opts.Weight * (r - c.ratio)
	}
	c.ratio = min(max(c.ratio, c.opts.Min), c.opts.Max)
	c.samples++
	return true
}

// Ratio returns the current ratio of reported to estimated tokens and the
// number of observations behind it.
func (c *Calibrator) Ratio() (ratio float64, samples int) {
	if c == nil {
		return 1, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ratio, c.samples
}

// Adjust scales an estimate by the ratio, rounding up.
func (c *Calibrator) Adjust(n int) int {
	r, _ := c.Ratio()
	a := float64(n) * r
	if a != float64(int(a)) {
		return int(a) + 1
	}
	return int(a)
}
