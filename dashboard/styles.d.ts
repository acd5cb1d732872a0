/** Stylesheets imported for their side effect: esbuild emits them as app.css. */
declare module '*.css';
