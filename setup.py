"""Build hook for the optional native accelerators of the protocol layer.

Everything else about the package lives in pyproject.toml. The extension is optional: when it
cannot be compiled the install still succeeds and kafkapy.protocol uses its pure-Python
equivalents (see kafkapy/protocol/_speedups.c). In an editable checkout, build it in place with
``python setup.py build_ext --inplace``.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "kafkapy.protocol._speedups",
            ["kafkapy/protocol/_speedups.c"],
            optional=True,
            extra_compile_args=["-O2"],
        )
    ]
)
