// `import DecantTesting` gives a test target the whole library too (models, values, stores, migration), as
// `import Decant` does for a program.
@_exported public import Decant
