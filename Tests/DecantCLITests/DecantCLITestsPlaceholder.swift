// Placeholder so the test target has a source file until its tests land.
