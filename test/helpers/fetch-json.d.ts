// Tests read JSON response bodies loosely: the assertions check their shape.
declare global {
  interface Response {
    json: () => Promise<any>
  }
}
export {}
