"""Every source location the notebooks and the documentation cite exists in the installed stack."""

import shutil

from helpers.source_citations import PACKAGES, Citation, citations, document_texts, package_root, problem


def test_every_cited_source_location_exists_in_the_installed_stack():
    found = citations(document_texts())
    assert found, "no source citations found: the pattern no longer matches the documents"
    roots = {package: package_root(package) for package in PACKAGES}
    problems = sorted({p for citation in found if (p := problem(citation, roots))})
    assert not problems, "\n".join(problems)


def test_a_citation_whose_name_was_removed_from_a_copy_fails(tmp_path):
    """The check can fail: a copy of a cited file without the cited name is reported, the original is not."""
    cited = next(c for c in citations(document_texts()) if c.name and c.path.startswith("executorch/"))
    original = package_root("executorch") / cited.path
    copy = tmp_path / cited.path
    copy.parent.mkdir(parents=True)
    shutil.copy(original, copy)
    roots = {"executorch": tmp_path}
    assert problem(cited, roots) is None
    last = cited.name.split(".")[-1]
    copy.write_text(copy.read_text().replace(last, "renamed_" + last[::-1]))
    assert problem(cited, roots) == f"{cited.document}: {cited.path} no longer contains {last}"
    assert "is not a file" in problem(Citation("x.md", "executorch/no/such_file.py", None), roots)
