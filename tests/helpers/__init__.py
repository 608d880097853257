"""What more than one test module uses: `browser` (Chromium, its flags, artifact folders, reaping what it leaves),
`graphs` (results built by hand for the graph tests, and the mark for tests that need Graphviz), `layers` (the
package's import graph and the layer table it is checked against), `models` (models several modules run) and
`source_citations` (the source paths the README and docs cite, and whether each holds what it is cited for).
Test modules import these, never each other."""
