// EJS ships no types, and @types/ejs is not among the packages every Node app
// shares: the one function this app calls.
declare module "ejs" {
  interface Options {
    escape?: (value: unknown) => string;
    cache?: boolean;
  }
  const ejs: {
    renderFile(file: string, data: object, options: Options, done: (err: Error | null, html?: string) => void): void;
  };
  export default ejs;
}
