"""kgc reports: rendering of traces and results (terminal, Markdown+Mermaid, HTML, JSON, JUnit, pytest)."""
