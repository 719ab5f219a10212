"""``agree demo``: the whole study on a generated language, an application on the
library verbs (:mod:`agreement.demo.run`), with its language generator
(:mod:`agreement.demo.synthlang`). Nothing in the pipeline imports this package."""
