"""A recipe whose claims stop holding must fail the build, loudly and by name.

Each test changes a fresh copy of the project and builds it.
"""

import re

from conftest import build_site, copy_project


def break_file(path, old, new):
    source = path.read_text()
    assert old in source, f"{old!r} not in {path.name}"
    path.write_text(source.replace(old, new, 1))


def break_recipe(project, name, old, new):
    break_file(project / "recipes" / name, old, new)


def break_notebook(project, name, old, new):
    break_file(project / "docs" / name, old, new)


def test_failing_snippet_that_stops_failing_fails_the_build(tmp_path):
    project = copy_project(tmp_path / "project")
    # the leaf update, made legal: the snippet no longer raises
    break_recipe(
        project, "plot_03_clone_before_inplace.py",
        'with expect_error(RuntimeError, "a leaf Variable that requires grad"):\n    x.add_(1)',
        'with expect_error(RuntimeError, "a leaf Variable that requires grad"):\n    x.detach().add_(1)',
    )
    code, output = build_site(project)
    assert code != 0
    assert "plot_03_clone_before_inplace.py unexpectedly failed" in output
    assert "expected RuntimeError with 'a leaf Variable that requires grad'; nothing was raised" in output


def test_snippet_failing_with_another_message_fails_the_build(tmp_path):
    project = copy_project(tmp_path / "project")
    break_recipe(
        project, "plot_05_indexing_and_inplace.py",
        '"a view of a leaf Variable that requires grad"', '"a view of a leaf tensor"',
    )
    code, output = build_site(project)
    assert code != 0
    assert "plot_05_indexing_and_inplace.py unexpectedly failed" in output
    assert "expected RuntimeError with 'a view of a leaf tensor', got RuntimeError" in output


def test_unexpected_raise_in_a_recipe_fails_the_build(tmp_path):
    project = copy_project(tmp_path / "project")
    break_recipe(
        project, "plot_06_parameter_decay.py",
        "w, x = fresh()\nloss = (w * x).sum()\nloss.backward()",
        'w, x = fresh()\nraise ValueError("planted by test_unexpected_raise")\nloss = (w * x).sum()\nloss.backward()',
    )
    code, output = build_site(project)
    assert code != 0
    assert "plot_06_parameter_decay.py unexpectedly failed" in output
    assert "ValueError: planted by test_unexpected_raise" in output


def test_notebook_cell_that_stops_raising_fails_the_build(tmp_path):
    project = copy_project(tmp_path / "project")
    break_notebook(
        project, "no_grad_guide.md",
        'with expect_error(RuntimeError, "Inplace update to inference tensor outside InferenceMode"):\n    frozen.add_(1)',
        'with expect_error(RuntimeError, "Inplace update to inference tensor outside InferenceMode"):\n    frozen.clone().add_(1)',
    )
    code, output = build_site(project)
    assert code != 0
    assert "no_grad_guide.md: WARNING: Executing notebook failed: CellExecutionError" in output
    assert "nothing was raised" in output


def test_unexpected_error_in_a_notebook_cell_fails_the_build(tmp_path):
    project = copy_project(tmp_path / "project")
    break_notebook(project, "inplace_overview.md", "a = torch.ones(3)\n",
                   'a = torch.ones(3)\nraise KeyError("planted by the test")\n')
    code, output = build_site(project)
    assert code != 0
    assert "inplace_overview.md: WARNING: Executing notebook failed: CellExecutionError" in output
    assert "KeyError: 'planted by the test'" in output


def test_hanging_notebook_cell_is_stopped_and_fails_the_build(tmp_path):
    project = copy_project(tmp_path / "project")
    break_notebook(project, "inplace_overview.md", "a = torch.ones(3)\n",
                   "import time\ntime.sleep(600)\na = torch.ones(3)\n")
    code, output = build_site(project, "-D", "nb_execution_timeout=5")
    assert code != 0
    assert "inplace_overview.md: WARNING: Executing notebook failed: CellTimeoutError" in output
    assert "timed out" in output


def test_hanging_recipe_is_stopped_and_fails_the_build(tmp_path):
    project = copy_project(tmp_path / "project")
    break_recipe(project, "plot_04_relu_inplace.py", "import copy\n",
                 "import copy\nimport time\n\ntime.sleep(600)\n")
    code, output = build_site(project, "-D", "recipe_timeout=5")
    assert code != 0
    assert "plot_04_relu_inplace.py unexpectedly failed" in output
    assert "TimeoutError: recipe plot_04_relu_inplace.py still running after 5 s" in output


def test_syntax_error_in_a_recipe_fails_the_build_with_file_and_line(tmp_path):
    project = copy_project(tmp_path / "project")
    break_recipe(project, "plot_03_clone_before_inplace.py",
                 "x = torch.randn(5, requires_grad=True)\n", "x = torch.randn(5, requires_grad=True\n")
    code, output = build_site(project, "--lang", "en")
    assert code != 0
    assert "plot_03_clone_before_inplace.py unexpectedly failed" in output
    assert re.search(r'File ".*plot_03_clone_before_inplace\.py", line \d+\n.*\n.*\n\s*SyntaxError: ', output), output


def test_untranslated_korean_message_fails_the_build_naming_the_catalog(tmp_path):
    import polib

    project = copy_project(tmp_path / "project")
    po_path = project / "locales/ko/LC_MESSAGES/recipes/plot_06_parameter_decay.po"
    po = polib.pofile(str(po_path))
    entry = next(e for e in po if e.msgid == "The safe version")
    entry.msgstr = ""
    po.save()
    line = polib.pofile(str(po_path)).find("The safe version").linenum
    code, output = build_site(project)
    assert code != 0
    assert f"{po_path}:{line}: untranslated: 'The safe version'" in output
    assert not (project / "build" / "html").exists(), "it should refuse before building anything"


def test_broken_cross_reference_fails_the_build_with_file_and_line(tmp_path):
    project = copy_project(tmp_path / "project")
    index = project / "docs" / "index.rst"
    text = index.read_text()
    index.write_text(text.replace("Start with :doc:`inplace_overview`", "Start with :doc:`inplace_overveiw`", 1))
    line = next(n for n, l in enumerate(index.read_text().splitlines(), 1) if "inplace_overveiw" in l)
    code, output = build_site(project, "--lang", "en")
    assert code != 0
    assert f"index.rst:{line}: WARNING: unknown document: 'inplace_overveiw'" in output, output
