"""Notebook kernels talk to the build over IPC (Unix sockets), not TCP.

myst-nb runs the notebooks through jupyter-cache and nbclient, which start the kernel
with jupyter_client's defaults: TCP on localhost, so ipykernel warns "Kernel is running
over TCP without encryption" and any local process could connect to its ports. None of
those packages passes settings to the kernel manager, but jupyter_client prepares every
launch through a *kernel provisioner* and reads the default one's name from the
environment variable ``JUPYTER_DEFAULT_PROVISIONER_NAME``. This is that provisioner:
jupyter_client's local one, with the transport set to IPC, its sockets in a private
temporary folder (mode 0700) removed when the kernel is cleaned up.

The provisioner is found through an entry point, declared in pyproject.toml
(``jupyter_client.kernel_provisioners``), which installing the package registers.
"""

import os
import shutil
import tempfile

from jupyter_client.provisioning import LocalProvisioner

NAME = "autograd-recipes-ipc"  # as in pyproject.toml's entry point


class IpcProvisioner(LocalProvisioner):
    """jupyter_client's LocalProvisioner over IPC."""

    _folder = None

    async def pre_launch(self, **kwargs):
        manager = self.parent
        if self._folder is None:
            self._folder = tempfile.mkdtemp(prefix="kernel-")  # 0700: only this user can connect
        manager.transport = "ipc"
        manager.ip = os.path.join(self._folder, "kernel")  # sockets kernel-1 ... kernel-5
        return await super().pre_launch(**kwargs)

    async def cleanup(self, restart=False):
        await super().cleanup(restart=restart)
        if not restart and self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)
            self._folder = None


def setup(app):
    os.environ["JUPYTER_DEFAULT_PROVISIONER_NAME"] = NAME
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
