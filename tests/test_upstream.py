"""Each assumption of src/autograd_recipes/upstream.py, checked against the installed packages.

When one of these fails after an upgrade, the message names the assumption; fix
upstream.py (and only it) to the package's new behaviour.
"""

import json
from pathlib import Path

from conftest import RECIPES, ROOT

from autograd_recipes import upstream
from autograd_recipes.project import PROJECT


def test_sphinx_gallery_keeps_an_md5_file_per_run_example(built_site):
    gallery = built_site[0] / "docs" / PROJECT.gallery_dir
    assert [p.name for p in upstream.gallery_md5_files(gallery)] == [f"{r.name}.md5" for r in RECIPES], (
        "sphinx-gallery no longer writes <gallery>/<name>.py.md5"
    )
    examples_dirs = PROJECT.config["sphinx_gallery_conf"]["examples_dirs"]
    conf = {"src_dir": str(built_site[0] / "docs"), "examples_dirs": examples_dirs}  # all it reads
    assert upstream.gallery_md5_file(conf, RECIPES[0].name).is_file()


def test_sphinx_gallery_caches_each_examples_run_time(built_site):
    for recipe in RECIPES:
        cost = upstream.gallery_cost_file(built_site[0] / "docs", PROJECT.recipe_docname(recipe))
        assert cost.is_file(), "sphinx-gallery no longer writes <gallery>/<name>.cost.json"
        assert json.loads(cost.read_text())["time"] > 0, "the cost file has no 'time'"


def test_sphinx_gallery_marks_outputs_footer_and_source_lines(built_site):
    project = built_site[0]
    page = (project / "build/html/en/recipes/plot_02_residual_add.html").read_text(encoding="utf-8")
    assert upstream.GALLERY_OUTPUT_CLASS in page, "output blocks have another class"
    assert upstream.GALLERY_FOOTER_CLASS in page, "the download footer has another class"
    rst = (project / "docs/recipes/plot_02_residual_add.rst").read_text(encoding="utf-8")
    assert upstream.GALLERY_SOURCE_LINES.search(rst), "no 'GENERATED FROM PYTHON SOURCE LINES' comments"


def test_sphinx_gallery_writes_the_cards_and_downloads_we_read(built_site):
    html = built_site[0] / "build/html/en"
    index = (html / "recipes/index.html").read_text(encoding="utf-8")
    for name in ("GALLERY_CARD_CLASS", "GALLERY_CARD_TITLE_CLASS", "GALLERY_CARDS_CLASS"):
        assert getattr(upstream, name) in index, f"the gallery's cards have no {getattr(upstream, name)}"
    assert upstream.GALLERY_CARD_DESCRIPTION_CLASS in index  # ours, after the caption (gallery_cards)
    page = (html / f"recipes/{RECIPES[0].stem}.html").read_text(encoding="utf-8")
    for name, _suffix in upstream.GALLERY_DOWNLOAD_CLASSES:
        assert name in page, f"an example's page has no {name}"
    rst = (built_site[0] / "docs" / PROJECT.gallery_dir / f"{RECIPES[0].stem}.rst").read_text(
        encoding="utf-8"
    )
    # the note above the downloads (first_screen takes it off the page)
    assert upstream.GALLERY_DOWNLOAD_NOTE_CLASS in rst, "the download note has another class"
    thumbnail = upstream.GALLERY_THUMBNAIL.format(stem=RECIPES[0].stem)
    # graph_figures' picture is the first image, an .svg: sphinx-gallery's thumbnail of it, named so
    assert (
        (built_site[0] / "docs" / PROJECT.gallery_dir / "images" / thumbnail).with_suffix(".svg").is_file()
    ), "sphinx-gallery names or keeps its thumbnails otherwise"


def test_myst_nb_records_execution_and_reads_notebooks(built_site):
    from myst_nb.sphinx_ import NbMetadataCollector

    assert callable(getattr(NbMetadataCollector, "get_exec_data", None)), (
        "no NbMetadataCollector.get_exec_data"
    )
    text = (ROOT / "docs/no_grad_guide.md").read_text(encoding="utf-8")
    assert upstream.is_notebook_text(text)
    assert not upstream.is_notebook_text("# A plain page\n")


def test_myst_nb_writes_executed_notebooks_beside_the_output_folder():
    from myst_nb import sphinx_ext

    assert sphinx_ext.OUTPUT_FOLDER == upstream.MYST_NB_OUTPUT_FOLDER, (
        "myst-nb writes its executed notebooks to another folder than <outdir>/../jupyter_execute"
    )


def test_executed_notebooks_are_not_published(built_site):
    assert not (built_site[0] / "build" / "html" / upstream.MYST_NB_OUTPUT_FOLDER).exists()


def test_jupyter_client_launches_kernels_through_the_environments_default_provisioner(capfd, monkeypatch):
    """src/autograd_recipes/execution/kernel_ipc.py: the provisioner named by JUPYTER_DEFAULT_PROVISIONER_NAME,
    found through the entry point of the dist-info beside it, runs the kernel over IPC, so
    the kernel has nothing to warn about."""
    from jupyter_client.manager import KernelManager
    from jupyter_client.provisioning import KernelProvisionerFactory

    from autograd_recipes.execution import kernel_ipc

    monkeypatch.setenv("JUPYTER_DEFAULT_PROVISIONER_NAME", kernel_ipc.NAME)
    monkeypatch.setattr(KernelProvisionerFactory, "_instance", None)  # the singleton reads it once
    manager = KernelManager(kernel_name="python3")
    manager.start_kernel()
    try:
        client = manager.client()
        client.start_channels()
        client.wait_for_ready(timeout=60)
        client.stop_channels()
        assert type(manager.provisioner).__name__ == "IpcProvisioner", "the entry point was not found"
        assert manager.transport == "ipc"
    finally:
        manager.shutdown_kernel(now=True)
    assert "WARNING" not in "".join(capfd.readouterr()), "the kernel still warns"


def test_sphinx_gallery_names_each_generated_file_after_its_example(built_site):
    """stale_outputs removes a deleted recipe's generated files by their names."""
    gallery = built_site[0] / "docs" / PROJECT.gallery_dir
    stems = {r.stem for r in RECIPES}
    named = {}
    for folder in upstream.gallery_section_folders(gallery):
        for path in folder.iterdir():
            if path.is_file():
                named[path.relative_to(gallery).as_posix()] = upstream.gallery_file_stem(
                    path.name, PROJECT.recipe_prefix
                )
    assert {n for n, stem in named.items() if stem is None} <= {"index.rst", ".execution-environment"}, named
    assert {stem for stem in named.values() if stem} == stems
    for recipe in RECIPES:  # each example's page, its pictures and its thumbnail are found
        stem, folder = (
            recipe.stem,
            Path(PROJECT.recipe_docname(recipe)).parent.relative_to(PROJECT.gallery_dir),
        )
        assert named[(folder / f"{stem}.rst").as_posix()] == stem
        thumbnail = (folder / f"images/thumb/sphx_glr_{stem}_thumb.svg").as_posix()
        assert named[thumbnail] == stem, "the thumbnails have another name"


def test_myst_nb_imports_its_sphinx_part_in_setup():
    """The build's held child imports upstream.SETUP_IMPORTS ahead (publish/build.py): the
    modules an extension's setup() imports. myst_nb's setup imports only those."""
    import inspect

    import myst_nb

    lines = [line.split() for line in inspect.getsource(myst_nb.setup).splitlines()]
    names = [words[1] for words in lines if words[:1] in (["from"], ["import"])]
    absolute = {f"myst_nb{name}" if name.startswith(".") else name for name in names}
    assert absolute and absolute <= set(upstream.SETUP_IMPORTS), (
        f"myst_nb's setup imports {sorted(absolute)} now; name them in upstream.SETUP_IMPORTS"
    )


def test_sphinx_gallery_keeps_the_picture_paths_it_handed_out(tmp_path):
    """graph_figures replaces a recipe's thumbnail once it shows a failing case: the first path."""
    from sphinx_gallery.scrapers import ImagePathIterator

    images = ImagePathIterator(tmp_path / "sphx_glr_plot_01_x_{0:03}.png")
    first, second = next(images), next(images)
    assert upstream.gallery_first_image(images) == first != second


def test_sphinx_gallery_makes_a_notebook_of_an_examples_blocks(tmp_path):
    """gallery_notebook: py_source_parser's blocks through notebook.jupyter_notebook, the
    hidden lines kept and config comments removed."""
    from sphinx_gallery.gen_gallery import DEFAULT_GALLERY_CONF

    example = tmp_path / "plot_x.py"
    example.write_text(
        '"""\nA title\n=======\n\nThe lede.\n"""\n\nx = 1\n\n# %%\n# Prose.\n\n'
        "# sphinx_gallery_start_ignore\nhidden = 2\n# sphinx_gallery_end_ignore\n"
        "# sphinx_gallery_dummy = 1\ny = x + 1\n",
        encoding="utf-8",
    )
    conf = {**DEFAULT_GALLERY_CONF, "remove_config_comments": True}
    notebook = upstream.gallery_notebook(example, conf, tmp_path)
    cells = [(c["cell_type"], "".join(c["source"])) for c in notebook["cells"]]
    assert cells[0][0] == "markdown" and "A title" in cells[0][1] and "The lede." in cells[0][1]
    assert [source for kind, source in cells if kind == "code"] == [
        "x = 1",
        "hidden = 2\ny = x + 1",  # the markers are config comments to sphinx-gallery: gone too
    ], cells
    assert notebook["nbformat"] == 4


def test_a_recipe_marked_current_is_one_sphinx_gallery_skips(tmp_path):
    """recipe_runs decides which recipes run, and marks one current for a build, through
    sphinx-gallery's md5 file; its own check must agree (gen_rst.md5sum_is_current, on the
    gallery's copy of the source)."""
    from sphinx_gallery.gen_rst import md5sum_is_current

    from autograd_recipes import upstream

    source, target = tmp_path / "plot_01_a.py", tmp_path / "gallery" / "plot_01_a.py"
    target.parent.mkdir()
    source.write_text("print(1)\n")
    target.write_text(source.read_text())
    assert not upstream.gallery_output_current(source, target) and not md5sum_is_current(target, mode="t")
    upstream.gallery_mark_current(source, target)
    assert upstream.gallery_output_current(source, target) and md5sum_is_current(target, mode="t")
    source.write_text("print(2)\n")  # the control: an edited recipe is no longer current
    assert not upstream.gallery_output_current(source, target)
