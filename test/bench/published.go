package bench

// publication is a set of figures another project measured and published,
// on its own machines. SizesTable prints them next to ours, marked as
// published elsewhere; no ratio is ever taken against them.
type publication struct {
	// Who measured what: the operator and its version.
	Who string
	// Machine is where they ran, as published.
	Machine     string
	Concurrency int
	// Source is where the figures come from.
	Source  string
	Figures []publishedFigure
}

// publishedFigure is one size of a publication.
type publishedFigure struct {
	N int
	// InstallSeconds is the time until every release was installed;
	// Approx when it was published as an approximation.
	InstallSeconds float64
	Approx         bool
	// PeakRSSMiB is the controller's peak memory; 0 when not published.
	PeakRSSMiB float64
	// AsPublished is the figure in the source's words.
	AsPublished string
}

// published holds, per scenario, the figures others published for the
// same workload. Flux's helm-controller benchmarks the podinfo chart
// (a Deployment scaled to 0, a ServiceAccount, a Service, an Ingress): the
// podinfo scenario's chart is shaped like it.
var published = map[string][]publication{
	"podinfo": {
		{
			Who:         "Flux helm-controller v2.9",
			Machine:     "a 16-core runner",
			Concurrency: 10,
			Source:      `GitHub issue 18 ("Performance: at the floor, at ten times the scale"), quoting Flux's published helm-controller figures`,
			Figures: []publishedFigure{
				{N: 1000, InstallSeconds: 4*60 + 39, PeakRSSMiB: 361, AsPublished: "1,000 HelmReleases of the podinfo chart installed in 4 min 39 s at 361 MiB peak"},
			},
		},
		{
			Who:         "Flux helm-controller",
			Machine:     "kind on a 16-core GitHub runner, helm-controller limited to 2 CPU / 1 GiB",
			Concurrency: 10,
			Source:      "github.com/fluxcd/flux-benchmark, RESULTS.md, HelmRelease rows (Flux v2.4 to v2.6)",
			Figures: []publishedFigure{
				{N: 100, InstallSeconds: 28, Approx: true, AsPublished: "100 releases ~28 s"},
				{N: 500, InstallSeconds: 2*60 + 45, Approx: true, AsPublished: "500 ~2 min 45 s"},
				{N: 1000, InstallSeconds: 8 * 60, Approx: true, PeakRSSMiB: 400, AsPublished: "1,000 ~8 min at 400 MiB peak"},
			},
		},
	},
}
