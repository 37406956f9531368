"""The machinery of the autograd-recipes site (see the README's layout table): subpackages
by subsystem, and project.py, the one model of the project they all read."""
