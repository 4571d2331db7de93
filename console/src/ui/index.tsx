// The console's building blocks, on native elements: <dialog> for confirmations (focus and Esc for free), <table> with
// a caption and sortable column headers, labelled fields whose error the server named, and the state of list pages
// and forms. Each kind lives in its own file; sections import them all from here.
export * from "./actions";
export * from "./base";
export * from "./dialogs";
export * from "./fields";
export * from "./list-state";
export * from "./lists";
export * from "./table";
