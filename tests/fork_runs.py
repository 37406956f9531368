"""Files run as ``python FILE`` runs them, each in a child forked from one interpreter that has
imported torch and IPython (a notebook's reader has Jupyter): a child costs milliseconds where
importing torch again costs seconds.

Each child runs one file as __main__, with fresh globals and ``argv = [its path]``, with the
environment variables its spec gives; ``alone`` makes this site's package unimportable, as on
a reader's machine. A notebook runs its code cells one after another in one namespace, as
"Run all" does. ``run`` gives {path: (exit code, stdout, stderr)}.
"""

import json
import subprocess
import sys

RUNNER = """
import json
import os
import runpy
import sys
import traceback
import torch
import IPython
# the first optimizer made in a process imports torch._dynamo (about 1 s): made once here,
# every child has it already; what a file prints does not change
torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.1)

results = {}
for spec in json.loads(sys.argv[1]):
    path = spec["path"]
    pid = os.fork()
    if pid == 0:
        with open(spec["out"] + ".stdout", "w") as out, open(spec["out"] + ".stderr", "w") as err:
            os.dup2(out.fileno(), 1), os.dup2(err.fileno(), 2)
        if spec["alone"]:
            sys.modules["autograd_recipes"] = None
        os.environ.update(spec["env"])
        sys.argv = [path]
        try:
            if path.endswith(".ipynb"):
                cells = json.load(open(path, encoding="utf-8"))["cells"]
                code = "\\n\\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
                exec(compile(code, path, "exec"), {"__name__": "__main__", "__file__": path})
            else:
                runpy.run_path(path, run_name="__main__")
            code = 0
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush(), sys.stderr.flush()
        os._exit(code)
    results[path] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
print(json.dumps(results))
"""


def run(files, folder, alone, env=None, timeout=600):
    """{file: (exit code, stdout, stderr)}, each of ``files`` run from ``folder`` (its
    outputs kept there, under the file's name)."""
    specs = [
        {"path": str(f), "out": str(folder / f.name), "alone": alone, "env": env(f) if env else {}}
        for f in files
    ]
    done = subprocess.run(
        [sys.executable, "-c", RUNNER, json.dumps(specs)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    assert done.returncode == 0 and done.stderr == "", done.stderr  # importing torch is silent
    codes = json.loads(done.stdout)
    return {
        f: (codes[str(f)], *((folder / f"{f.name}.{s}").read_text() for s in ("stdout", "stderr")))
        for f in files
    }
