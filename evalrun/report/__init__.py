"""evalrun report: one self-contained HTML file of a scored run (and, against a BASE run, of the
comparison): the headline per layer, retrieval judged by the judge, the retrieval funnel, subsets,
attribution, latency and cost, what was not scored, provenance, and every item readable with its
candidates, context, answer and the judge's verdicts. `write_report` is the one entry point; the modules:

- `gather`: the run, its release and snapshot read, and the funnel and sections computed;
- `items`: the items as one compact JSON document, texts capped and every cut counted;
- `judged`: the judge's grades of retrieved chunks (--judge-retrieval) and the section they fill;
- `comparison`: the comparison against BASE, as `evalrun compare` decided it;
- `probes`: a probe run (`evalrun probe`), on its own page or in a section of a run's (--probes);
- `charts`: inline SVG charts drawn by matplotlib;
- `render`: the Jinja2 templates filled and the file written atomically.
"""

from evalrun.report.gather import ReportError
from evalrun.report.render import WrittenReport, write_report

__all__ = ["ReportError", "WrittenReport", "write_report"]
